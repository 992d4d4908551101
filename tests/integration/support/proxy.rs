//! A TCP proxy of the test's own in front of the database, so a test can disturb one client's link to it
//! without touching the server or the other clients (this kernel has no netem): cut every open connection
//! at once, as a database restart does; refuse connections for a while; delay every byte; or black-hole
//! the link, where nothing passes either way until it heals and then what was sent arrives, as TCP's
//! retransmissions would deliver it.

use libtest_mimic::Failed;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// What the link does to the bytes and connections that cross it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    Pass,
    /// Every chunk is passed on this long after it was read, in each direction.
    Delay(Duration),
    /// Open connections were closed; new ones are closed as soon as they are accepted.
    Refuse,
    /// Nothing is read or written, and new connections wait: both ends see a silent peer.
    BlackHole,
}

pub struct Proxy {
    pub addr: SocketAddr,
    /// Bumped by `cut`; every connection opened under an older generation is closed.
    generation: Arc<watch::Sender<u64>>,
    link: Arc<watch::Sender<Link>>,
    accepted: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    pub async fn start(upstream: SocketAddr) -> Result<Proxy, Failed> {
        let listener = TcpListener::bind("127.0.0.1:0").await.map_err(|e| Failed::from(e.to_string()))?;
        let addr = listener.local_addr().map_err(|e| Failed::from(e.to_string()))?;
        let generation = Arc::new(watch::channel(0u64).0);
        let link = Arc::new(watch::channel(Link::Pass).0);
        let accepted = Arc::new(AtomicU64::new(0));
        let (gen, count, links) = (generation.clone(), accepted.clone(), link.clone());
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::Relaxed);
                let (cut, link) = (gen.subscribe(), links.subscribe());
                tokio::spawn(relay(client, upstream, cut, link));
            }
        });
        Ok(Proxy { addr, generation, link, accepted, task })
    }

    /// Closes every open connection, as a database restart does.
    pub fn cut(&self) {
        self.generation.send_modify(|g| *g += 1);
    }

    /// Sets what the link does from now on; [`Link::Refuse`] also closes the open connections.
    pub fn set_link(&self, link: Link) {
        self.link.send_replace(link);
        if link == Link::Refuse {
            self.cut();
        }
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.link.send_replace(Link::Pass);
        self.cut();
        self.task.abort();
    }
}

/// One client's connection, relayed to the upstream until either side ends it or the proxy cuts it.
async fn relay(
    client: TcpStream,
    upstream: SocketAddr,
    mut cut: watch::Receiver<u64>,
    mut link: watch::Receiver<Link>,
) {
    let born = *cut.borrow_and_update();
    let relayed = async {
        // A black hole swallows the handshake too: the upstream is reached once it heals.
        let passable = match link.wait_for(|l| *l != Link::BlackHole).await {
            Ok(current) => *current != Link::Refuse,
            Err(_) => false,
        };
        if !passable {
            return;
        }
        let Ok(server) = TcpStream::connect(upstream).await else { return };
        let (client_read, client_write) = client.into_split();
        let (server_read, server_write) = server.into_split();
        tokio::join!(
            pump(client_read, server_write, link.clone()),
            pump(server_read, client_write, link.clone())
        );
    };
    tokio::select! {
        _ = relayed => {}
        _ = cut.wait_for(|g| *g != born) => {}
    }
}

/// Copies one direction: chunks are read (not while black-holed) with the instant they came, and written
/// once the link's delay after that instant has passed (not while black-holed).
async fn pump(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, link: watch::Receiver<Link>) {
    let (chunks, mut queued) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let mut read_link = link.clone();
    let read = async move {
        let mut buffer = vec![0u8; 16 * 1024];
        loop {
            if read_link.wait_for(|l| *l != Link::BlackHole).await.is_err() {
                return;
            }
            match from.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if chunks.send((Instant::now(), buffer[..n].to_vec())).is_err() {
                        return;
                    }
                }
            }
        }
    };
    let mut write_link = link;
    let write = async move {
        while let Some((read_at, chunk)) = queued.recv().await {
            if !wait_for_passage(&mut write_link, read_at).await || to.write_all(&chunk).await.is_err() {
                return;
            }
        }
        let _ = to.shutdown().await;
    };
    tokio::join!(read, write);
}

/// Waits until a chunk read at `read_at` may be written: the link is not black-holed and its delay has
/// passed. False once the proxy is gone.
async fn wait_for_passage(link: &mut watch::Receiver<Link>, read_at: Instant) -> bool {
    loop {
        let current = *link.borrow_and_update();
        match current {
            Link::BlackHole => {
                if link.changed().await.is_err() {
                    return false;
                }
            }
            Link::Delay(delay) if Instant::now() < read_at + delay => {
                tokio::select! {
                    _ = tokio::time::sleep_until(read_at + delay) => {}
                    changed = link.changed() => if changed.is_err() { return false },
                }
            }
            _ => return true,
        }
    }
}
