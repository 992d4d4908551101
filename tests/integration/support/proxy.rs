//! A TCP proxy in front of the database, so a test can cut every connection at once, as a database
//! restart does, without disturbing the other tests sharing the server.

use libtest_mimic::Failed;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

pub struct Proxy {
    pub addr: SocketAddr,
    /// Bumped by `cut`; every connection opened under an older generation is closed.
    generation: Arc<watch::Sender<u64>>,
    accepted: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    pub async fn start(upstream: SocketAddr) -> Result<Proxy, Failed> {
        let listener = TcpListener::bind("127.0.0.1:0").await.map_err(|e| Failed::from(e.to_string()))?;
        let addr = listener.local_addr().map_err(|e| Failed::from(e.to_string()))?;
        let generation = Arc::new(watch::channel(0u64).0);
        let accepted = Arc::new(AtomicU64::new(0));
        let (gen, count) = (generation.clone(), accepted.clone());
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::Relaxed);
                let mut cut = gen.subscribe();
                let born = *cut.borrow();
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(upstream).await else { return };
                    let (mut client, mut server) = (client, server);
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = cut.wait_for(|g| *g != born) => {}
                    }
                });
            }
        });
        Ok(Proxy { addr, generation, accepted, task })
    }

    /// Closes every open connection, as a database restart does.
    pub fn cut(&self) {
        self.generation.send_modify(|g| *g += 1);
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.cut();
        self.task.abort();
    }
}
