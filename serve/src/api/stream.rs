//! Streamed responses: a blocking library call writes into a `Write` whose bytes flow to the
//! client as they come, a bounded channel in between (so memory stays at a few buffers however
//! large the body, and a slow client slows the writer instead of filling memory).

use std::io::{self, Write};

use axum::body::{Body, Bytes};
use tokio::sync::mpsc;

/// Buffers per stream in flight: with 256 KiB buffers, at most about 2 MiB per response.
const DEPTH: usize = 8;
const BUF: usize = 256 << 10;

/// A `Write` sending its bytes to the response body.
pub struct ChannelWriter {
    tx: mpsc::Sender<io::Result<Bytes>>,
    buf: Vec<u8>,
}

impl ChannelWriter {
    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(&mut self.buf, Vec::with_capacity(BUF)));
        // The client went away: stop the writer with the error a closed pipe gives.
        self.tx
            .blocking_send(Ok(chunk))
            .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))
    }

    /// Ends the body with an error (the client sees a cut-off transfer, not a short success).
    pub fn fail(self, e: io::Error) {
        let _ = self.tx.blocking_send(Err(e));
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.buf.len() + data.len() > BUF {
            self.send()?;
        }
        if data.len() >= BUF {
            self.tx
                .blocking_send(Ok(Bytes::copy_from_slice(data)))
                .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
        } else {
            self.buf.extend_from_slice(data);
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()
    }
}

/// A body fed by `f`, which runs on the blocking pool writing into the stream.
pub fn body_from<F>(f: F) -> Body
where
    F: FnOnce(&mut ChannelWriter) -> io::Result<()> + Send + 'static,
{
    let (tx, mut rx) = mpsc::channel::<io::Result<Bytes>>(DEPTH);
    tokio::task::spawn_blocking(move || {
        let mut w = ChannelWriter {
            tx,
            buf: Vec::with_capacity(BUF),
        };
        match f(&mut w).and_then(|()| w.flush()) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
            Err(e) => w.fail(e),
        }
    });
    let stream = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
    Body::from_stream(stream)
}
