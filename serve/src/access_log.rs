//! The access log (`rewind serve --log PATH`): a line per request, with who asked, what, the
//! answer's status and how long it took, for a server left running where nobody watches its
//! terminal. The query is left out: `GET /v1/events` may carry the token there.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;

/// Where the lines go: a file opened for appending, or stderr.
pub type Sink = Arc<Mutex<Box<dyn Write + Send>>>;

/// Opens the log: `-` is stderr, anything else a file appended to (created mode 0600: the log
/// names what was asked of the store).
pub fn open(path: &std::path::Path) -> std::io::Result<Sink> {
    let w: Box<dyn Write + Send> = if path == std::path::Path::new("-") {
        Box::new(std::io::stderr())
    } else {
        use std::os::unix::fs::OpenOptionsExt;
        Box::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(path)?,
        )
    };
    Ok(Arc::new(Mutex::new(w)))
}

/// The middleware: answers the request, then writes its line. A line that cannot be written is
/// dropped (the request was answered; the log is not worth failing it).
pub async fn log(sink: Sink, req: Request, next: Next) -> Response {
    let start = Instant::now();
    let peer = crate::guard::peer_of(&req);
    let what = format!("{} {}", req.method(), req.uri().path());
    let response = next.run(req).await;
    let line = format!(
        "{} {peer} \"{what}\" {} {:.1} ms\n",
        humantime::format_rfc3339_seconds(SystemTime::now()),
        response.status().as_u16(),
        start.elapsed().as_secs_f64() * 1000.0
    );
    if let Ok(mut w) = sink.lock() {
        let _ = w.write_all(line.as_bytes());
        let _ = w.flush();
    }
    response
}
