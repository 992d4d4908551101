//! Memory the program holds outside Rust's ownership: the allocators' settings and the pages of code that
//! start-up alone touched. The admin's `unsafe` calls into the C library and mimalloc live here, each with
//! the reason it is sound; `main.rs` only calls them.

/// The admin's global allocator, declared in `main.rs` (only a binary may declare one).
pub use mimalloc::MiMalloc as Allocator;

/// Allocator settings for the admin's load, made once before the runtime's threads start.
pub fn tune_allocators() {
    one_c_malloc_arena();
    give_back_freed_memory_sooner();
}

/// SQLite allocates through the C library's malloc (the rest of the program through mimalloc), and glibc
/// gives each thread that allocates an arena of its own: the SQLite writer's and readers' connection
/// threads kept three arenas of free pages, 3–4 MB more at 10,000 fires a second than one shared
/// arena. Only the writer allocates much, so they do not contend for it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn one_c_malloc_arena() {
    // SAFETY: mallopt only sets a parameter of the C allocator, under the allocator's own lock.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) };
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn one_c_malloc_arena() {}

/// mimalloc (v3) keeps memory freed for a second before it gives it back to the system. The admin's work
/// comes in bursts once a second (every-second jobs are due at its top), so a burst's garbage was still
/// held when the next burst allocated. At 10,000 fires a second, given back after 100 ms, the admin's
/// peak RSS went from 74–83 to 66–70 MB on SQLite and from 67–78 to 62–66 MB on MariaDB and PostgreSQL,
/// its CPU within the runs' spread (given back at once: 8 % more CPU). `MIMALLOC_PURGE_DELAY` in the
/// environment still decides.
const ALLOCATOR_PURGE_DELAY_MS: std::ffi::c_long = 100;
/// `mi_option_purge_delay` in mimalloc v3's option enum; the `mimalloc` crate names no options.
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

extern "C" {
    #[cfg(test)]
    fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

fn give_back_freed_memory_sooner() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one of mimalloc's options (linked in by the `mimalloc` crate), before the runtime's
        // threads start.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, ALLOCATOR_PURGE_DELAY_MS) };
    }
}

/// Start-up runs much code the running admin never calls again (configuration, the schema check, building
/// the console's routes, TLS and metrics set-up), and the kernel maps 64 KB of the binary around each page
/// first touched: after start-up 9 MB of code stays resident where idling needs about 6. Unmapping the
/// binary's read-only segments now returns what start-up alone used; what the admin runs next is mapped
/// again from the page cache on first use. The pages stay in the page cache, so nothing is read twice.
/// A page of those segments that is a private copy (a debugger's breakpoint, a uprobe) is left mapped, as
/// unmapping it would lose the change; without /proc/self/pagemap to tell them apart, nothing is unmapped.
#[cfg(target_os = "linux")]
pub fn release_start_up_code() {
    use std::os::unix::fs::FileExt;
    // /proc/self/pagemap holds one 64-bit word per page of the address space.
    const PRESENT: u64 = 1 << 63;
    const FILE_OR_SHARED: u64 = 1 << 61;
    let Ok(pagemap) = std::fs::File::open("/proc/self/pagemap") else { return };
    // SAFETY: sysconf only reads a constant of the system.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    for (start, end) in read_only_segments() {
        let (start, end) = (start.next_multiple_of(page), end / page * page);
        if end <= start {
            continue;
        }
        let mut words = vec![0u8; (end - start) / page * 8];
        if pagemap.read_exact_at(&mut words, (start / page * 8) as u64).is_err() {
            return;
        }
        let mut from = start;
        for (index, word) in words.chunks_exact(8).enumerate() {
            let word = <[u8; 8]>::try_from(word).map_or(0, u64::from_ne_bytes);
            if word & PRESENT != 0 && word & FILE_OR_SHARED == 0 {
                let at = start + index * page;
                unmap_clean(from, at);
                from = at + page;
            }
        }
        unmap_clean(from, end);
    }
}

/// Drops the mappings of pages of the binary that are the file's own, as read from the page cache.
#[cfg(target_os = "linux")]
fn unmap_clean(from: usize, to: usize) {
    if to > from {
        // SAFETY: [from, to) is whole pages of a read-only segment of this executable holding no private
        // copy, so the next access maps the same bytes again from the file.
        unsafe { libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_DONTNEED) };
    }
}

/// The address ranges of the executable's loaded segments that are never written.
#[cfg(target_os = "linux")]
fn read_only_segments() -> Vec<(usize, usize)> {
    extern "C" fn collect(info: *mut libc::dl_phdr_info, _: usize, data: *mut libc::c_void) -> libc::c_int {
        // SAFETY: the C library passes a valid `dl_phdr_info` whose `dlpi_phdr` points at `dlpi_phnum`
        // program headers for the duration of the call; `data` is the vector passed below.
        let (info, segments) = unsafe { (&*info, &mut *data.cast::<Vec<(usize, usize)>>()) };
        let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) };
        for header in headers.iter().filter(|h| h.p_type == libc::PT_LOAD && h.p_flags & libc::PF_W == 0) {
            let start = (info.dlpi_addr + header.p_vaddr) as usize;
            segments.push((start, start + header.p_memsz as usize));
        }
        // The first object visited is the executable itself; shared libraries are left alone.
        1
    }
    let mut segments: Vec<(usize, usize)> = Vec::new();
    // SAFETY: the callback reads only what it is given and writes only into `segments`, which outlives
    // the call.
    unsafe { libc::dl_iterate_phdr(Some(collect), (&mut segments as *mut Vec<(usize, usize)>).cast()) };
    segments
}

#[cfg(not(target_os = "linux"))]
pub fn release_start_up_code() {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option's number is mimalloc v3's purge delay: 1,000 ms by default there, or what the
    /// environment says (v2's option 15 is another).
    #[test]
    fn the_purge_delay_option_is_mimallocs() {
        let from_env = std::env::var("MIMALLOC_PURGE_DELAY")
            .ok()
            .map(|v| v.trim().parse().expect("a number of milliseconds"));
        // SAFETY: reads and sets one of mimalloc's options; no other test touches them.
        unsafe {
            assert_eq!(mi_option_get(MI_OPTION_PURGE_DELAY), from_env.unwrap_or(1_000));
            give_back_freed_memory_sooner();
            assert_eq!(mi_option_get(MI_OPTION_PURGE_DELAY), from_env.unwrap_or(ALLOCATOR_PURGE_DELAY_MS));
        }
    }
}
