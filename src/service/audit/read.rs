//! Reading the audit file back, newest first, for the console's audit page: the file is read from its
//! end in blocks, so a page of recent events costs a few blocks whatever the file's size, and a time
//! range stops the reading once it is passed.

use serde_json::Value;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Bytes read from the end at a time.
const BLOCK: u64 = 64 * 1024;
/// Events are appended about in time order; one written this much earlier than the one after it is
/// still looked for past the start of a time range.
const ORDER_SLACK_MS: i64 = 60_000;

/// What the page asks for; every filter is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Epoch ms, inclusive.
    pub from_ms: Option<i64>,
    pub to_ms: Option<i64>,
    /// The acting user's name, or part of it, any case.
    pub user: Option<String>,
    /// A kind (`job.update`) or a family of kinds (`job`).
    pub kind: Option<String>,
    /// Text anywhere in the event, any case.
    pub text: Option<String>,
}

impl Filter {
    fn matches(&self, line: &str, event: &Value) -> bool {
        let at = event["epochMs"].as_i64().unwrap_or(0);
        if self.from_ms.is_some_and(|from| at < from) || self.to_ms.is_some_and(|to| at > to) {
            return false;
        }
        if let Some(user) = &self.user {
            let name = event["actor"]["userName"].as_str().unwrap_or("").to_lowercase();
            if !name.contains(&user.to_lowercase()) {
                return false;
            }
        }
        if let Some(kind) = &self.kind {
            let actual = event["kind"].as_str().unwrap_or("");
            if actual != kind && !actual.strip_prefix(kind.as_str()).is_some_and(|rest| rest.starts_with('.'))
            {
                return false;
            }
        }
        self.text.as_ref().is_none_or(|text| line.to_lowercase().contains(&text.to_lowercase()))
    }

    /// No event this early or earlier can match any more.
    fn passed(&self, event: &Value) -> bool {
        let at = event["epochMs"].as_i64().unwrap_or(i64::MAX);
        self.from_ms.is_some_and(|from| at < from.saturating_sub(ORDER_SLACK_MS))
    }
}

/// One page of matching events, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub events: Vec<Value>,
    /// Older matching events follow.
    pub more: bool,
}

/// The matching events of `path` after skipping `offset` of them, at most `limit`, newest first. Lines
/// that are not JSON objects (a line cut short by a full disk) are passed over.
pub fn newest(path: &Path, filter: &Filter, offset: usize, limit: usize) -> std::io::Result<Page> {
    let mut lines = Backwards::open(path)?;
    let (mut skipped, mut events) = (0, Vec::new());
    while let Some(line) = lines.next_line()? {
        let Ok(event @ Value::Object(_)) = serde_json::from_str::<Value>(&line) else { continue };
        if filter.passed(&event) {
            break;
        }
        if !filter.matches(&line, &event) {
            continue;
        }
        if skipped < offset {
            skipped += 1;
        } else if events.len() == limit {
            return Ok(Page { events, more: true });
        } else {
            events.push(event);
        }
    }
    Ok(Page { events, more: false })
}

/// The lines of a file, last first.
struct Backwards {
    file: File,
    /// Where the unread part of the file ends.
    end: u64,
    /// Read but not yet returned, without the newline that ended the last line returned.
    pending: Vec<u8>,
}

impl Backwards {
    fn open(path: &Path) -> std::io::Result<Backwards> {
        let mut file = File::open(path)?;
        let end = file.seek(SeekFrom::End(0))?;
        Ok(Backwards { file, end, pending: Vec::new() })
    }

    fn next_line(&mut self) -> std::io::Result<Option<String>> {
        loop {
            // A line is complete once the newline before it is read, or the file's start is reached.
            if let Some(at) = self.pending.iter().rposition(|&b| b == b'\n') {
                let line = self.pending.split_off(at + 1);
                self.pending.truncate(at);
                return Ok(Some(String::from_utf8_lossy(&line).into_owned()));
            }
            if self.end == 0 {
                let line = std::mem::take(&mut self.pending);
                return Ok((!line.is_empty()).then(|| String::from_utf8_lossy(&line).into_owned()));
            }
            self.read_block()?;
        }
    }

    /// Puts the block before the unread part in front of what is pending.
    fn read_block(&mut self) -> std::io::Result<()> {
        let size = BLOCK.min(self.end);
        self.end -= size;
        self.file.seek(SeekFrom::Start(self.end))?;
        let mut block = vec![0; size as usize];
        self.file.read_exact(&mut block)?;
        block.extend_from_slice(&self.pending);
        self.pending = block;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_of(lines: &[String]) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        for line in lines {
            writeln!(file, "{line}").unwrap();
        }
        file
    }

    fn event(n: i64, user: &str, kind: &str) -> String {
        serde_json::json!({"epochMs": n * 1000, "kind": kind, "actor": {"userName": user}, "target": {"name": format!("job-{n}")}}).to_string()
    }

    fn numbers(page: &Page) -> Vec<i64> {
        page.events.iter().map(|e| e["epochMs"].as_i64().unwrap() / 1000).collect()
    }

    #[test]
    fn lines_come_back_last_first_across_blocks() {
        // Lines longer than a block, and many of them, with a partial last line and a blank one.
        let long = "x".repeat(BLOCK as usize + 17);
        let mut file = file_of(&["first".into(), long.clone(), String::new(), "last".into()]);
        write!(file, "cut").unwrap();
        let mut lines = Backwards::open(file.path()).unwrap();
        let mut seen = Vec::new();
        while let Some(line) = lines.next_line().unwrap() {
            seen.push(line);
        }
        assert_eq!(seen, ["cut", "last", "", long.as_str(), "first"]);
        let empty = tempfile::NamedTempFile::new().unwrap();
        assert_eq!(Backwards::open(empty.path()).unwrap().next_line().unwrap(), None);
    }

    #[test]
    fn pages_are_newest_first_and_filtered() {
        let mut lines: Vec<String> = (1..=5000)
            .map(|n| {
                event(
                    n,
                    if n % 2 == 0 { "Alice" } else { "bob" },
                    if n % 3 == 0 { "job.update" } else { "signin" },
                )
            })
            .collect();
        lines.insert(10, "not json".into());
        let file = file_of(&lines);
        let all = Filter::default();
        let page = newest(file.path(), &all, 0, 3).unwrap();
        assert_eq!((numbers(&page), page.more), (vec![5000, 4999, 4998], true));
        assert_eq!(numbers(&newest(file.path(), &all, 4998, 5).unwrap()), vec![2, 1]);
        let alice_jobs = Filter { user: Some("ALI".into()), kind: Some("job".into()), ..Filter::default() };
        assert_eq!(numbers(&newest(file.path(), &alice_jobs, 1, 2).unwrap()), vec![4992, 4986]);
        let range = Filter { from_ms: Some(100_000), to_ms: Some(103_000), ..Filter::default() };
        let page = newest(file.path(), &range, 0, 10).unwrap();
        assert_eq!((numbers(&page), page.more), (vec![103, 102, 101, 100], false));
        let text = Filter { text: Some("JOB-77\"".into()), ..Filter::default() };
        assert_eq!(numbers(&newest(file.path(), &text, 0, 10).unwrap()), vec![77]);
        let family = Filter { kind: Some("sign".into()), ..Filter::default() };
        assert!(newest(file.path(), &family, 0, 10).unwrap().events.is_empty(), "a kind matches whole words");
    }
}
