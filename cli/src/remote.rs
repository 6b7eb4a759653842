//! `remote add/ls/rm`, `push`, `pull`, and the `--remote` forms of restore, verify and gc.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::output::{self, human_bytes, paint};
use super::{CliResult, Ctx};
use rewind::error::Error;
use rewind::id::Id;
use rewind::remote::{self, Remote, Secret, config};
use rewind::store::Store;
use rewind::wire;
use zeroize::{Zeroize, Zeroizing};

pub use rewind::remote::restore::is_empty_dir;

/// `remote`.
#[derive(Args, Debug)]
pub struct RemoteArgs {
    #[command(subcommand)]
    pub command: RemoteCommand,
}

/// `remote` subcommands.
#[derive(Subcommand, Debug)]
pub enum RemoteCommand {
    /// Add a remote: s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX], az://CONTAINER[/PREFIX]
    /// (credentials, region and endpoint from the AWS_*, GOOGLE_*, AZURE_* environment; see
    /// GUIDE.md, "Remotes") or file:///PATH
    Add {
        /// Its name
        name: String,
        /// Its URL
        url: String,
        /// Add it without reaching it first (offline setup): by default the bucket is listed
        /// once, and a missing bucket, refused credentials or an unreachable server refuse it
        #[arg(long, conflicts_with = "encrypt")]
        no_check: bool,
        /// Encrypt everything pushed to it (names too), with a key made from a password
        /// (REWIND_REMOTE_PASSWORD, --password-file, or asked for) or a key file (--key-file).
        /// A remote already encrypted from another machine is joined with its password
        #[arg(long)]
        encrypt: bool,
        /// The key file of an encrypted remote (32 or more random bytes); its path is kept in
        /// the store's remotes.toml, the key never leaves the file
        #[arg(long, value_name = "PATH", requires = "encrypt")]
        key_file: Option<PathBuf>,
        /// Read the password of an encrypted remote from this file (its first line)
        #[arg(
            long,
            value_name = "PATH",
            requires = "encrypt",
            conflicts_with = "key_file"
        )]
        password_file: Option<PathBuf>,
    },
    /// Change the password (or key file) of an encrypted remote: its master key is wrapped
    /// again, no data is uploaded, and the old password stops working
    Passwd {
        /// The remote
        name: String,
        /// The new password, from this file (its first line); else REWIND_REMOTE_NEW_PASSWORD,
        /// else asked for
        #[arg(long, value_name = "PATH")]
        new_password_file: Option<PathBuf>,
        /// A key file instead of a password from now on
        #[arg(long, value_name = "PATH", conflicts_with = "new_password_file")]
        new_key_file: Option<PathBuf>,
    },
    /// List remotes
    Ls,
    /// Forget a remote (nothing on it is deleted)
    Rm {
        /// Its name
        name: String,
    },
    /// Pull the log of a workspace pushed from REMOTE_PATH into this workspace's log (by default
    /// a pulled log goes to the workspace of the same path here, if this store has one)
    Map {
        /// The remote
        name: String,
        /// The workspace's path where it was pushed from (see `rewind log` there)
        remote_path: String,
    },
    /// List the snapshots on a remote, newest first, with their workspaces and tags (what
    /// `restore --remote NAME REV` and `pull NAME REV` take; `latest` is the first)
    Snapshots {
        /// The remote (a name or a URL)
        name: String,
    },
    /// Delete snapshots (and tags pointing at them) from a remote; `gc --remote` frees their data
    Forget {
        /// The remote
        name: String,
        /// Snapshots or tags on the remote
        #[arg(required = true)]
        revs: Vec<String>,
    },
}

/// `push`.
#[derive(Args, Debug)]
pub struct PushArgs {
    /// The remote (a name or a URL) [default: the only one, else "origin"], then the snapshots to push
    /// [default: the workspace's latest]
    #[arg(value_name = "NAME|REV")]
    pub args: Vec<String>,
    /// Every snapshot and tag in the store
    #[arg(long)]
    pub all: bool,
    /// Every tag, with its snapshot
    #[arg(long)]
    pub tags: bool,
    /// Every artifact too
    #[arg(long)]
    pub artifacts: bool,
    /// Move tags that point elsewhere on the remote
    #[arg(long)]
    pub force: bool,
}

/// `pull`.
#[derive(Args, Debug)]
pub struct PullArgs {
    /// The remote (a name or a URL) [default: the only one, else "origin"], then the snapshots or tags to pull
    /// [default: every snapshot and tag on the remote]
    #[arg(value_name = "NAME|REV")]
    pub args: Vec<String>,
    /// Every snapshot and tag on the remote (the default when no REV is given)
    #[arg(long)]
    pub all: bool,
    /// Every artifact too
    #[arg(long)]
    pub artifacts: bool,
}

/// The remote `push` or `pull` works with, and the revisions given.
struct Picked {
    remote: Remote,
    revs: Vec<String>,
    /// The remotes configured, when the first argument was taken as a revision because no
    /// remote has its name: if it is no revision either, it was most likely a remote's name.
    guessed: Option<Vec<String>>,
}

impl Picked {
    /// `e`, the failure to resolve `rev`, or the clearer "no remote named ..." when `rev` is
    /// the first argument and was probably meant as a remote.
    fn unknown(&self, rev: &str, e: Error, here: &str) -> Error {
        let first = self.revs.first().map(String::as_str);
        let not_found = match &e {
            Error::UnknownRevision(_) => true,
            // Not found on the remote, or the remote itself failed: only the first is this.
            Error::Remote { .. } => self.remote.reach().is_ok(),
            _ => false,
        };
        match &self.guessed {
            Some(names)
                if not_found && first == Some(rev) && config::validate_name(rev).is_ok() =>
            {
                Error::Invalid(format!(
                    "no remote named '{rev}' (remotes: {}), and no snapshot or tag '{rev}' {here}",
                    names.join(", ")
                ))
            }
            _ => e,
        }
    }
}

/// Picks the remote from the first argument, or the default: the first argument names a
/// remote when one of that name exists; otherwise it is a revision.
fn pick(store: &Store, args: &[String]) -> Result<Picked, Error> {
    let remotes = config::list(store.dir())?;
    let mut guessed = None;
    let (name, revs) = match args.first() {
        Some(first) if remotes.contains_key(first) || first.contains("://") => {
            (first.clone(), args[1..].to_vec())
        }
        _ => {
            let name = if remotes.len() == 1 {
                remotes.keys().next().cloned().unwrap_or_default()
            } else if remotes.contains_key("origin") {
                "origin".to_string()
            } else if remotes.is_empty() {
                return Err(Error::Invalid(
                    "no remote: add one with `rewind remote add NAME URL`".into(),
                ));
            } else {
                return Err(Error::Invalid(format!(
                    "several remotes ({}) and none named origin: name one",
                    remotes.keys().cloned().collect::<Vec<_>>().join(", ")
                )));
            };
            if !args.is_empty() {
                guessed = Some(remotes.keys().cloned().collect());
            }
            (name, args.to_vec())
        }
    };
    Ok(Picked {
        remote: open(store, &name)?,
        revs,
        guessed,
    })
}

fn open(store: &Store, name: &str) -> Result<Remote, Error> {
    // A URL where a name is expected: used as it is, nothing configured; an encrypted one is
    // known by its marker.
    if name.contains("://") {
        config::validate_url(name)?;
        let mut remote = Remote::open(name, name)?;
        if remote.marker_encrypted() {
            remote.unlock(&secret(name, None, None, PASSWORD_ENV)?)?;
        }
        return Ok(remote);
    }
    let cfg = config::get(store.dir(), name)?;
    let mut remote = Remote::open(name, &cfg.url)?;
    if cfg.encrypt {
        let key_file = cfg.key_file.as_deref().map(Path::new);
        remote.unlock(&secret(name, key_file, None, PASSWORD_ENV)?)?;
    }
    Ok(remote)
}

/// The variable holding an encrypted remote's password.
const PASSWORD_ENV: &str = "REWIND_REMOTE_PASSWORD";
/// The variable holding the file an encrypted remote's password is read from.
const PASSWORD_FILE_ENV: &str = "REWIND_REMOTE_PASSWORD_FILE";
/// The variable holding the new password for `remote passwd`.
const NEW_PASSWORD_ENV: &str = "REWIND_REMOTE_NEW_PASSWORD";

/// What unlocks encrypted remote `name`: its key file, else the password from a file, from
/// `env`, from the file REWIND_REMOTE_PASSWORD_FILE names, or typed at the terminal.
fn secret(
    name: &str,
    key_file: Option<&Path>,
    password_file: Option<&Path>,
    env: &str,
) -> Result<Secret, Error> {
    if let Some(path) = key_file {
        let mut bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        if bytes.len() < 32 {
            bytes.zeroize();
            return Err(Error::Invalid(format!(
                "key file {}: {} bytes; a key file holds 32 or more random bytes (e.g. `head -c 32 /dev/urandom`)",
                path.display(),
                bytes.len()
            )));
        }
        return Ok(Secret::KeyFile(bytes));
    }
    // The buffers a password passes through are wiped (Secret wipes its own copy).
    let from_file = |path: &Path| -> Result<String, Error> {
        let text = Zeroizing::new(std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?);
        Ok(text.lines().next().unwrap_or_default().to_string())
    };
    let password = if let Some(path) = password_file {
        from_file(path)?
    } else if let Some(pw) = std::env::var_os(env) {
        // (The environment itself keeps its copy: the process cannot wipe that.)
        let mut raw = std::os::unix::ffi::OsStringExt::into_vec(pw);
        let text = String::from_utf8_lossy(&raw).into_owned();
        raw.zeroize();
        text
    } else if let Some(path) = std::env::var_os(PASSWORD_FILE_ENV).filter(|_| env == PASSWORD_ENV) {
        from_file(Path::new(&path))?
    } else if std::io::stdin().is_terminal() {
        let what = if env == NEW_PASSWORD_ENV {
            "new password"
        } else {
            "password"
        };
        read_password(&format!("{what} for remote {name}: "))
            .map_err(|e| Error::io("/dev/tty", e))?
    } else {
        return Err(Error::RemotePasswordMissing {
            remote: name.to_string(),
            new: env == NEW_PASSWORD_ENV,
        });
    };
    // Moved into the Secret, which wipes it when dropped.
    let secret = Secret::Password(password);
    if matches!(&secret, Secret::Password(p) if p.is_empty()) {
        return Err(Error::Invalid(format!("remote {name}: an empty password")));
    }
    Ok(secret)
}

/// `rewind remote ...`.
pub fn remote(ctx: &Ctx, a: RemoteArgs) -> CliResult {
    let store = ctx.open_store(matches!(a.command, RemoteCommand::Add { .. }))?;
    match a.command {
        RemoteCommand::Add {
            name,
            url,
            no_check,
            encrypt,
            key_file,
            password_file,
        } => {
            config::validate_name(&name)?;
            config::validate_url(&url)?;
            if encrypt {
                return add_encrypted(ctx, &store, &name, &url, key_file, password_file);
            }
            // Reached once now, so a typo in the bucket or missing credentials show here
            // rather than at the first push.
            let found = if no_check {
                None
            } else {
                let remote = Remote::open(&name, &url)?;
                Some(remote.reach().map_err(|e| match e {
                    Error::RemoteKeyNeeded {
                        encrypted: true, ..
                    } => Error::Invalid(format!(
                        "remote '{name}': {url} is encrypted; not added (add it \
                         with `rewind remote add {name} {url} --encrypt`, and `--key-file PATH` \
                         for a key file)"
                    )),
                    e => Error::Invalid(format!(
                        "{}; not added (pass --no-check to add it anyway)",
                        super::hints::message(&e)
                    )),
                })?)
            };
            config::add(store.dir(), &name, &url)?;
            if ctx.json {
                output::print_json(&wire::RemoteAdded {
                    added: name,
                    url,
                    checked: found.is_some(),
                    holds_remote: found,
                    encrypted: false,
                })?;
            } else if !ctx.quiet {
                let what = match found {
                    None => ", not checked",
                    Some(true) => ", a rewind remote",
                    Some(false) => ", empty: the first push sets it up",
                };
                println!("added remote {name} ({url}{what})");
            }
        }
        RemoteCommand::Passwd {
            name,
            new_password_file,
            new_key_file,
        } => {
            let mut remote = open(&store, &name)?;
            if !remote.is_unlocked() {
                return Err(Error::RemoteKeyNeeded {
                    remote: name,
                    why: "not an encrypted remote: it has no password".into(),
                    encrypted: false,
                }
                .into());
            }
            let key_file = new_key_file.as_deref().map(absolute).transpose()?;
            let new = secret(
                &name,
                key_file.as_deref(),
                new_password_file.as_deref(),
                NEW_PASSWORD_ENV,
            )?;
            let id = remote.change_key(&new)?;
            config::set_key_file(
                store.dir(),
                &name,
                key_file.as_deref().and_then(Path::to_str),
            )?;
            if ctx.json {
                output::print_json(&wire::RemoteKeyRotated {
                    remote: name,
                    key: id,
                })?;
            } else if !ctx.quiet {
                println!("remote {name}: new key {id}; the old one no longer opens it");
            }
        }
        RemoteCommand::Ls => {
            let list = config::list(store.dir())?;
            if ctx.json {
                let v: Vec<wire::RemoteEntry> = list
                    .iter()
                    .map(|(n, c)| wire::RemoteEntry::new(n, c))
                    .collect();
                output::print_json(&v)?;
            } else {
                let mut out = std::io::stdout().lock();
                for (n, c) in list {
                    writeln!(out, "{}\t{}", paint(ctx.color, output::bold(), &n), c.url)?;
                }
            }
        }
        RemoteCommand::Rm { name } => {
            if !config::remove(store.dir(), &name)? {
                return Err(Error::NoRemote(name).into());
            }
            if ctx.json {
                output::print_json(&wire::RemoteRemoved { removed: name })?;
            } else if !ctx.quiet {
                println!("removed remote {name} (nothing on it was deleted)");
            }
        }
        RemoteCommand::Map { name, remote_path } => {
            let local = ctx.workspace_root(&store)?;
            config::map_workspace(store.dir(), &name, &remote_path, &local)?;
            if ctx.json {
                output::print_json(&wire::RemoteMapped {
                    remote: name,
                    remote_workspace: remote_path,
                    workspace: local.display().to_string(),
                })?;
            } else if !ctx.quiet {
                println!(
                    "pulls from {name} append the log of {remote_path} to {}",
                    local.display()
                );
            }
        }
        RemoteCommand::Snapshots { name } => {
            let remote = open(&store, &name)?;
            list_snapshots(ctx, &remote)?;
        }
        RemoteCommand::Forget { name, revs } => {
            let remote = open(&store, &name)?;
            let ids = revs
                .iter()
                .map(|r| remote.resolve(r))
                .collect::<Result<Vec<_>, _>>()?;
            let tags = remote::gc::forget(&remote, &ids)?;
            if ctx.json {
                output::print_json(&wire::RemoteForgotten::new(&name, &ids, tags.clone()))?;
            } else if !ctx.quiet {
                println!(
                    "forgot {} snapshots on {name} ({} tags removed); `rewind gc --remote {name}` frees their data",
                    ids.len(),
                    tags.len()
                );
            }
        }
    }
    Ok(0)
}

/// `rewind remote snapshots NAME`: one line per snapshot (`--json`: a `SnapshotList`).
fn list_snapshots(ctx: &Ctx, remote: &Remote) -> CliResult {
    let snapshots = remote.snapshots()?;
    let mut tags: std::collections::HashMap<rewind::Id, Vec<String>> = Default::default();
    for (name, id) in remote.tags()? {
        tags.entry(id).or_default().push(name);
    }
    let none = Vec::new();
    if ctx.json {
        let list = wire::SnapshotList {
            snapshots: snapshots
                .iter()
                .map(|s| wire::Snapshot::new(s, tags.get(&s.id()).unwrap_or(&none)))
                .collect(),
        };
        output::print_json(&list)?;
        return Ok(0);
    }
    let mut out = std::io::stdout().lock();
    for s in &snapshots {
        let named = tags
            .get(&s.id())
            .map(|t| format!(" ({})", t.join(", ")))
            .unwrap_or_default();
        writeln!(
            out,
            "{}  {}  {}  {} {:>10}{}{}",
            paint(ctx.color, output::id_style(), &s.id().short()),
            output::format_time(s.time_ns()),
            output::path_text(s.workspace()),
            output::count(s.stats().files as usize, "file"),
            human_bytes(s.stats().bytes),
            paint(ctx.color, output::bold(), &named),
            output::message_suffix("  ", s.message())
        )?;
    }
    if snapshots.is_empty() && !ctx.quiet {
        eprintln!("rewind: no snapshots on {}", remote.name);
    }
    Ok(0)
}

/// Reads a line from the terminal with echo off (restored afterwards, also on error).
fn read_password(prompt: &str) -> std::io::Result<String> {
    use std::os::fd::AsRawFd;
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")?;
    let fd = tty.as_raw_fd();
    // SAFETY: termios is plain data; tcgetattr fills it for a descriptor we hold open.
    let mut old: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open for the whole block; `old` is a valid termios.
    if unsafe { libc::tcgetattr(fd, &mut old) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut quiet = old;
    quiet.c_lflag &= !libc::ECHO;
    quiet.c_lflag |= libc::ECHONL;
    (&tty).write_all(prompt.as_bytes())?;
    // SAFETY: as above.
    unsafe { libc::tcsetattr(fd, libc::TCSANOW, &quiet) };
    // A byte at a time into a buffer that is wiped, rather than through a BufReader whose
    // buffer would keep the password until it is freed.
    let mut line = Zeroizing::new(Vec::with_capacity(256));
    let mut byte = [0u8; 1];
    let read = loop {
        match std::io::Read::read(&mut &tty, &mut byte) {
            Ok(0) => break Ok(()),
            Ok(_) if byte[0] == b'\n' => break Ok(()),
            Ok(_) => line.push(byte[0]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    byte.zeroize();
    // SAFETY: as above; the saved settings are put back whatever the read did.
    unsafe { libc::tcsetattr(fd, libc::TCSANOW, &old) };
    read?;
    let text = std::str::from_utf8(&line).map_err(|_| {
        std::io::Error::new(std::io::ErrorKind::InvalidData, "the password is not UTF-8")
    })?;
    Ok(text.trim_end_matches('\r').to_string())
}

/// A key file's path made absolute, so the remote opens from any directory.
fn absolute(path: &Path) -> Result<PathBuf, Error> {
    std::path::absolute(path).map_err(|e| Error::io(path, e))
}

/// `remote add --encrypt`: sets up (or joins) the encryption on the remote, then records it.
fn add_encrypted(
    ctx: &Ctx,
    store: &Store,
    name: &str,
    url: &str,
    key_file: Option<PathBuf>,
    password_file: Option<PathBuf>,
) -> CliResult {
    if let Ok(old) = config::get(store.dir(), name) {
        return Err(Error::RemoteExists {
            name: name.to_string(),
            url: old.url,
        }
        .into());
    }
    let key_file = key_file.as_deref().map(absolute).transpose()?;
    let secret = secret(
        name,
        key_file.as_deref(),
        password_file.as_deref(),
        PASSWORD_ENV,
    )?;
    let mut remote = Remote::open(name, url)?;
    let created = remote.init_encryption(&secret)?;
    let key_path = key_file.as_deref().and_then(Path::to_str);
    config::add_with(store.dir(), name, url, true, key_path)?;
    if ctx.json {
        output::print_json(&wire::RemoteAdded {
            added: name.to_string(),
            url: url.to_string(),
            checked: true,
            holds_remote: Some(!created),
            encrypted: true,
        })?;
    } else if !ctx.quiet {
        let what = if created {
            "encrypted, new key"
        } else {
            "encrypted, joined with its key"
        };
        println!("added remote {name} ({url}, {what})");
    }
    Ok(0)
}

/// `rewind push`.
pub fn push(ctx: &Ctx, a: PushArgs) -> CliResult {
    let store = ctx.open_store(false)?;
    let picked = pick(&store, &a.args)?;
    let remote = &picked.remote;
    let mut revs = picked.revs.clone();
    let reader = store.reader()?;
    let mut opts = remote::push::PushOptions {
        force: a.force,
        lock_timeout: ctx.lock_timeout,
        ..Default::default()
    };
    if revs.is_empty() && !a.all && !a.tags && !a.artifacts {
        revs.push("@".into());
    }
    if a.all {
        opts.snapshots = reader.all_snapshots()?;
    }
    if a.all || a.tags {
        for (name, id) in reader.tags()? {
            opts.snapshots.push(id);
            opts.tags.push((name, id));
        }
    }
    for rev in &revs {
        let id = super::inspect::resolve(ctx, &store, &reader, rev)
            .map_err(|e| picked.unknown(rev, e, "in this store"))?;
        opts.snapshots.push(id);
        if let Some(tagged) = reader.tag(rev)? {
            opts.tags.push((rev.clone(), tagged));
        }
    }
    if a.artifacts {
        opts.artifacts = reader.artifacts()?;
    }
    drop(reader);
    dedup(&mut opts.snapshots);
    let bar = super::progress::Bar::new(ctx);
    let r = remote::push::push(&store, remote, &opts, &bar, &waiting(ctx, remote))?;
    super::snap::trace_phases(&r.phases);
    for (name, id) in &r.tags_refused {
        output::warn(&format!(
            "tag {name} on remote {} points at {}: left alone (pass --force to move it)",
            remote.name,
            id.short()
        ));
    }
    for (name, id) in &r.tags_raced {
        output::warn(&format!(
            "tag {name} on remote {} was moved to {} by another push while this one moved it: left as that push set it",
            remote.name,
            id.short()
        ));
    }
    if ctx.json {
        output::print_json(&wire::Pushed::new(remote, &r))?;
    } else if !ctx.quiet {
        println!(
            "pushed to {}: {} ({} already there), {} in {}, {} sent, {}, {:.2} s",
            paint(ctx.color, output::bold(), &remote.name),
            output::count(r.snapshots_sent as usize, "snapshot"),
            r.snapshots_present,
            output::count(r.objects as usize, "object"),
            output::count(r.packs as usize, "pack"),
            human_bytes(r.bytes_sent),
            output::count(r.requests as usize, "request"),
            r.seconds
        );
    }
    // A forced move the user asked for did not happen.
    Ok(if r.tags_raced.is_empty() { 0 } else { 1 })
}

/// Says on stderr what a push or gc waits for (the remote's lock), once.
fn waiting(ctx: &Ctx, remote: &Remote) -> impl Fn(&str) + use<> {
    let quiet = ctx.quiet || ctx.json;
    let name = remote.name.clone();
    let timeout = ctx.lock_timeout.as_secs_f64();
    move |holder: &str| {
        if !quiet {
            eprintln!(
                "rewind: waiting for remote {name} (up to {timeout:.0} s, --lock-timeout): held by {holder} ..."
            );
        }
    }
}

fn dedup(ids: &mut Vec<Id>) {
    let mut seen = std::collections::HashSet::new();
    ids.retain(|i| seen.insert(*i));
}

/// `rewind pull`.
pub fn pull(ctx: &Ctx, a: PullArgs) -> CliResult {
    let store = ctx.open_store(true)?;
    let picked = pick(&store, &a.args)?;
    let (remote, revs) = (&picked.remote, &picked.revs);
    let mut opts = remote::pull::PullOptions::default();
    if revs.is_empty() || a.all {
        opts.snapshots = remote.snapshot_ids()?;
        opts.tags = remote.tags()?;
        opts.snapshots.extend(opts.tags.iter().map(|(_, i)| *i));
    }
    for rev in revs {
        let id = remote
            .resolve(rev)
            .map_err(|e| picked.unknown(rev, e, "on that remote"))?;
        opts.snapshots.push(id);
        if let Some(tagged) = remote.tag(rev).ok().flatten() {
            opts.tags.push((rev.clone(), tagged));
        }
    }
    if a.artifacts {
        opts.artifacts = remote.artifacts()?;
    }
    if !remote.name.contains("://") {
        opts.workspace_map = config::get(store.dir(), &remote.name)?
            .workspaces
            .into_iter()
            .map(|(from, to)| (from.into_bytes(), std::path::PathBuf::from(to)))
            .collect();
    }
    dedup(&mut opts.snapshots);
    let bar = super::progress::Bar::new(ctx);
    let r = remote::pull::pull(&store, remote, &opts, &bar)?;
    for (name, id) in &r.tags_kept {
        output::warn(&format!(
            "tag {name} here points at {}: left alone (the remote's differs)",
            id.short()
        ));
    }
    if ctx.json {
        output::print_json(&wire::Pulled::new(remote, &r))?;
    } else if !ctx.quiet {
        println!(
            "pulled from {}: {} ({} already here), {}, {} received, {}, {:.2} s",
            paint(ctx.color, output::bold(), &remote.name),
            output::count(r.snapshots_received as usize, "snapshot"),
            r.snapshots_present,
            output::count(r.objects as usize, "object"),
            human_bytes(r.bytes_received),
            output::count(r.requests as usize, "request"),
            r.seconds
        );
        for (path, n) in &r.logs_appended {
            println!(
                "  {} added to the log of {}",
                output::count(*n as usize, "snapshot"),
                path.display()
            );
        }
    }
    Ok(0)
}

/// For `restore --remote NAME REV`: pulls the snapshot REV names on the remote (only what the
/// store lacks) and returns its id.
pub fn pull_for_restore(ctx: &Ctx, store: &Store, name: &str, rev: &str) -> Result<Id, Error> {
    let remote = open(store, name)?;
    let id = remote.resolve(rev)?;
    let opts = remote::pull::PullOptions {
        snapshots: vec![id],
        ..Default::default()
    };
    let bar = super::progress::Bar::new(ctx);
    let r = remote::pull::pull(store, &remote, &opts, &bar)?;
    if !ctx.quiet && !ctx.json {
        eprintln!(
            "rewind: pulled {} from {name}: {} objects, {}",
            id.short(),
            r.objects,
            human_bytes(r.bytes_received)
        );
    }
    Ok(id)
}

/// `restore --remote NAME REV` into an empty directory: straight from the remote's packs.
pub fn restore_empty(
    ctx: &Ctx,
    store: &Store,
    root: &std::path::Path,
    name: &str,
    rev: &str,
) -> CliResult {
    let remote = open(store, name)?;
    let id = remote.resolve(rev)?;
    let bar = super::progress::Bar::new(ctx);
    let _interrupt = rewind::interrupt::Guard::install()?;
    let r = remote::restore::restore_empty(store, &remote, id, root, &bar)?;
    super::snap::trace_phases(&r.phases);
    if ctx.json {
        output::print_json(&wire::RemoteRestored::new(root, &remote, &r))?;
    } else if !ctx.quiet {
        println!(
            "restored {} from {}: {} files ({}), {} received in {} requests, {:.2} s (undo with `rewind undo`)",
            paint(ctx.color, output::id_style(), &r.snapshot.short()),
            remote.name,
            r.written,
            human_bytes(r.bytes_written),
            human_bytes(r.bytes_received),
            r.requests,
            r.seconds
        );
    }
    Ok(0)
}

/// `rewind verify --remote NAME`: exit 1 when anything is wrong.
pub fn verify(ctx: &Ctx, name: &str, full: bool) -> CliResult {
    let store = ctx.open_store(false)?;
    let remote = open(&store, name)?;
    let bar = super::progress::Bar::new(ctx);
    let r = remote::gc::verify(&remote, full, &bar)?;
    if ctx.json {
        output::print_json(&wire::RemoteVerify::new(&remote, full, &r))?;
    } else {
        let mut out = std::io::stdout().lock();
        for p in &r.problems {
            writeln!(out, "{}: {}", p.what, p.why)?;
        }
        if !ctx.quiet {
            writeln!(
                out,
                "remote {}: {} snapshots, {} packs, {} reachable objects{}: {}",
                remote.name,
                r.snapshots,
                r.packs,
                r.reachable,
                if full {
                    format!(", {} hashed", human_bytes(r.bytes_checked))
                } else {
                    String::new()
                },
                if r.problems.is_empty() {
                    "ok".to_string()
                } else {
                    format!("{} problems", r.problems.len())
                }
            )?;
            if r.orphan_packs > 0 {
                writeln!(
                    out,
                    "{} packs without an index (left by an interrupted push; `rewind gc --remote {}` removes them)",
                    r.orphan_packs, remote.name
                )?;
            }
        }
    }
    Ok(if r.problems.is_empty() { 0 } else { 1 })
}

/// `rewind gc --remote NAME`.
pub fn gc(ctx: &Ctx, name: &str) -> CliResult {
    let store = ctx.open_store(false)?;
    let remote = open(&store, name)?;
    let bar = super::progress::Bar::new(ctx);
    let r = remote::gc::gc(&remote, &bar, ctx.lock_timeout, &waiting(ctx, &remote))?;
    if ctx.json {
        output::print_json(&wire::RemoteGc::new(&remote, &r))?;
    } else if !ctx.quiet {
        println!(
            "gc on remote {}: {} snapshots kept; {} of {} packs deleted, {} rewritten, {} orphans removed; {} freed, {:.2} s",
            remote.name,
            r.snapshots,
            r.packs_deleted,
            r.packs_before,
            r.packs_repacked,
            r.orphans_deleted,
            human_bytes(r.bytes_freed),
            r.seconds
        );
    }
    Ok(0)
}
