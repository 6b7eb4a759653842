//! The client side of the watch daemon (`crate::daemon`): where its socket is, the wire
//! protocol, and the one question a walk asks it: which directories may have changed since the
//! token the stat cache was written at.
//!
//! This sits below the snapshot so that every command that walks can ask; the daemon itself
//! (above the snapshot, since it takes automatic snapshots) serves the same protocol. The
//! protocol is JSON lines over a Unix socket, described in ARCHITECTURE.md ("The watch
//! daemon"). Any failure to reach or understand the daemon means "no daemon": a full walk.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::narrow::Untrusted;
use super::token::Token;

/// The daemon's directory inside the store directory (owner-only).
pub const DAEMON_DIR: &str = "daemon";

/// The files of a store's daemon.
#[derive(Clone, Debug)]
pub struct DaemonPaths {
    /// `<store>/daemon`, mode 0700: only the owner can reach the socket inside.
    pub dir: PathBuf,
    /// The Unix socket clients connect to.
    pub socket: PathBuf,
    /// Held locked (flock) by the running daemon: one daemon per store.
    pub lock: PathBuf,
    /// Where `rewind daemon start` sends the daemon's messages.
    pub log: PathBuf,
    /// The workspaces that opted in (`rewind watch on`), as JSON.
    pub watchlist: PathBuf,
}

/// The daemon files of the store in `store_dir`.
pub fn paths(store_dir: &Path) -> DaemonPaths {
    let dir = store_dir.join(DAEMON_DIR);
    DaemonPaths {
        socket: dir.join("sock"),
        lock: dir.join("lock"),
        log: dir.join("log"),
        watchlist: dir.join("watch.json"),
        dir,
    }
}

/// A request, one JSON object per line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Which directories of `workspace` may have changed since `since`; hands out a new
    /// token. (It replaced `query`, which listed the unchanged directories: an older daemon
    /// does not know it and answers with an error, which means a full walk.)
    Changes {
        /// The workspace's canonical path.
        workspace: String,
        /// The token the caller's stat cache was written at.
        since: Option<Token>,
    },
    /// The daemon's state (`rewind daemon status --json`).
    Status,
    /// Re-read the watch list.
    Reload,
    /// Stop the daemon.
    Stop,
    /// Stream events as JSON lines until the client hangs up.
    Subscribe {
        /// Only this workspace's events (canonical path); None: all.
        workspace: Option<String>,
        /// First send the recent events the daemon still holds.
        replay: bool,
        /// Stop after the replay instead of following.
        follow: bool,
    },
}

/// The answer to [`Request::Changes`]: a JSON line, then `changed_len` bytes listing what
/// must not be trusted, each entry a kind byte ([`CHANGED_DIR`] or [`CHANGED_TREE`]), the
/// relative path and a NUL byte (the root is the empty path); or [`CHANGED_ENTRY`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryAnswer {
    /// The new token to record with the stat cache this walk writes (None when the workspace
    /// is not watched, or its watch is broken).
    pub token: Option<Token>,
    /// Why nothing is trusted (None: `changed_len` bytes follow).
    pub full: Option<String>,
    /// Length of the list that follows.
    pub changed_len: usize,
    /// No ignore file (`.gitignore`, `.ignore`, `.rewindignore`) changed since the caller's
    /// token: untouched subtrees need not be read at all (see `StatCache::load_narrowed`).
    #[serde(default)]
    pub prune: bool,
    /// The ignore globs the daemon's watches follow: a directory they leave out is not
    /// watched, so a walk that enters it cannot trust what the daemon says.
    #[serde(default)]
    pub globs: Vec<String>,
}

/// In a [`QueryAnswer`]'s list: none of the directory's entries can be trusted.
pub const CHANGED_DIR: u8 = b'd';
/// In a [`QueryAnswer`]'s list: this entry may have changed (the other entries of its
/// directory did not, unless named too).
pub const CHANGED_ENTRY: u8 = b'n';
/// In a [`QueryAnswer`]'s list: nothing at or below the directory can be trusted.
pub const CHANGED_TREE: u8 = b't';

/// Encodes an answer's list (the daemon's side).
#[cfg_attr(not(feature = "daemon"), allow(dead_code))]
pub fn encode_changed<'a>(
    dirs: impl IntoIterator<Item = &'a [u8]>,
    names: impl IntoIterator<Item = &'a [u8]>,
    trees: impl IntoIterator<Item = &'a [u8]>,
) -> Vec<u8> {
    let mut out = Vec::new();
    for (kind, list) in [
        (CHANGED_DIR, dirs.into_iter().collect::<Vec<_>>()),
        (CHANGED_ENTRY, names.into_iter().collect()),
        (CHANGED_TREE, trees.into_iter().collect()),
    ] {
        for p in list {
            out.push(kind);
            out.extend_from_slice(p);
            out.push(0);
        }
    }
    out
}

/// Decodes an answer's list; None if it is malformed.
fn decode_changed(bytes: &[u8]) -> Option<Untrusted> {
    let (mut dirs, mut names, mut trees) = (Vec::new(), Vec::new(), Vec::new());
    let mut rest = bytes;
    while !rest.is_empty() {
        let end = rest.iter().position(|&b| b == 0)?;
        let (kind, path) = (rest[0], rest[1..end].to_vec());
        match kind {
            CHANGED_DIR => dirs.push(path),
            CHANGED_ENTRY => names.push(path),
            CHANGED_TREE => trees.push(path),
            _ => return None,
        }
        rest = &rest[end + 1..];
    }
    Some(Untrusted::new(dirs, names, trees))
}

/// What a walk learned from the daemon.
#[derive(Clone, Debug, Default)]
pub enum Narrowing {
    /// No daemon answered.
    #[default]
    NoDaemon,
    /// The daemon answered but nothing can be trusted; `token` (if any) is recorded anyway so
    /// that the next walk can be narrowed.
    Full {
        /// The token to record.
        token: Option<Token>,
        /// Why (overflow, restarted daemon, not watched...).
        reason: String,
    },
    /// Every directory the daemon watches is unchanged since the stat cache's token, but
    /// these.
    Changed {
        /// The token to record.
        token: Token,
        /// What changed.
        untrusted: Untrusted,
        /// Whether untouched subtrees may be left unread (no ignore file changed).
        prune: bool,
        /// The ignore globs the daemon's watches follow.
        globs: Vec<String>,
    },
}

/// How a snapshot's walk used the daemon (reported with the snapshot).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "walk", rename_all = "snake_case")]
pub enum WalkNarrowing {
    /// A full walk: no daemon, or the caller did not ask.
    #[default]
    Full,
    /// A full walk because the daemon could not vouch for anything.
    DaemonFull {
        /// The daemon's reason.
        reason: String,
    },
    /// Directories the daemon vouched for were not `lstat`ed.
    Narrowed {
        /// How many directories, entries or subtrees the daemon said may have changed.
        untrusted: usize,
        /// Whether subtrees where nothing changed were not even listed.
        pruned: bool,
    },
}

/// How long a client waits for the daemon before walking without it. Generous: the daemon
/// answers in a millisecond when idle, and a late answer only costs a full walk.
const TIMEOUT: Duration = Duration::from_secs(10);

/// A connection to a store's daemon.
pub struct Client {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Client {
    /// Connects to the daemon of the store in `store_dir`; an error when none is running.
    pub fn connect(store_dir: &Path) -> std::io::Result<Client> {
        let stream = UnixStream::connect(paths(store_dir).socket)?;
        stream.set_read_timeout(Some(TIMEOUT))?;
        stream.set_write_timeout(Some(TIMEOUT))?;
        Ok(Client {
            writer: stream.try_clone()?,
            reader: BufReader::new(stream),
        })
    }

    /// Sends one request.
    pub fn send(&mut self, req: &Request) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(req)?;
        line.push(b'\n');
        self.writer.write_all(&line)
    }

    /// Reads one JSON line; None at end of stream.
    pub fn read_line(&mut self) -> std::io::Result<Option<serde_json::Value>> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        Ok(Some(serde_json::from_str(&line)?))
    }

    /// Sends a request and reads its one-line answer.
    pub fn call(&mut self, req: &Request) -> std::io::Result<serde_json::Value> {
        self.send(req)?;
        self.read_line()?.ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the daemon closed the connection",
            )
        })
    }

    /// No read timeout (a subscriber waits for events as long as it likes).
    pub fn wait_forever(&mut self) -> std::io::Result<()> {
        self.reader.get_ref().set_read_timeout(None)
    }

    /// Asks which directories of `workspace` may have changed since `since`.
    pub fn query(&mut self, workspace: &str, since: Option<Token>) -> std::io::Result<Narrowing> {
        self.send(&Request::Changes {
            workspace: workspace.to_string(),
            since,
        })?;
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        let answer: QueryAnswer = serde_json::from_str(&line)?;
        let mut bytes = vec![0u8; answer.changed_len];
        self.reader.read_exact(&mut bytes)?;
        Ok(match (answer.full, answer.token) {
            (None, Some(token)) => match decode_changed(&bytes) {
                Some(untrusted) => Narrowing::Changed {
                    token,
                    untrusted,
                    prune: answer.prune,
                    globs: answer.globs,
                },
                None => Narrowing::Full {
                    token: Some(token),
                    reason: "the daemon's answer was malformed".into(),
                },
            },
            (full, token) => Narrowing::Full {
                token,
                reason: full.unwrap_or_else(|| "no token".into()),
            },
        })
    }
}

/// Asks the store's daemon, if one runs, about the workspace at `root` (canonical). A
/// workspace whose path is not UTF-8 is never watched, so it is not asked about.
pub fn narrow(store_dir: &Path, root: &Path, since: Option<Token>) -> Narrowing {
    let Some(ws) = root.to_str() else {
        return Narrowing::NoDaemon;
    };
    match Client::connect(store_dir).and_then(|mut c| c.query(ws, since)) {
        Ok(n) => n,
        Err(_) => Narrowing::NoDaemon,
    }
}

/// Whether the store's daemon runs and watches the workspace at `root` (canonical), so a
/// command need not watch it itself.
pub fn watches(store_dir: &Path, root: &Path) -> bool {
    let Some(ws) = root.to_str() else {
        return false;
    };
    let Ok(status) = Client::connect(store_dir).and_then(|mut c| c.call(&Request::Status)) else {
        return false;
    };
    status["workspaces"].as_array().is_some_and(|list| {
        list.iter()
            .any(|w| w["workspace"] == ws && w["watching"] == true)
    })
}
