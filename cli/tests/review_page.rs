//! The review page in a real browser: headless Chromium driven through chromedriver (W3C
//! WebDriver), against `rewind serve` on a real store, a real workspace and a copy overlay.
//! Clicks accept and reject on single hunks and whole files, and undo, then checks the
//! workspace's files byte for byte; and shows that file names and contents holding markup are
//! shown as text, never run.
//!
//! Both processes are started here (loopback, free ports) and stopped at the end. Where
//! chromium or chromedriver is missing the tests say so and pass, except under CI (env `CI`),
//! where they fail: .ci/run installs Debian's `chromium` and `chromium-driver`. Nothing waits
//! for a fixed time: every step waits for a DOM condition, with a generous limit.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{self, Env};

/// How long a DOM condition, a process start or one WebDriver call may take: far beyond what a
/// loaded machine needs, short enough that a broken page fails the run in minutes.
const PATIENCE: Duration = Duration::from_secs(120);

/// The browser and its driver, or None (reason printed) where they are not installed.
fn browser() -> Option<Browser> {
    let missing: Vec<&str> = ["chromium", "chromedriver"]
        .into_iter()
        .filter(|b| {
            Command::new(b)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .map_or(true, |s| !s.success())
        })
        .collect();
    if !missing.is_empty() {
        let why = format!(
            "{} not installed (apt-get install chromium chromium-driver)",
            missing.join(" and ")
        );
        assert!(!common::is_ci(), "CI must run the browser tests: {why}");
        eprintln!("SKIPPED: the review page's browser tests: {why}");
        return None;
    }
    Some(Browser::start())
}

/// A child process killed (and reaped) when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `cmd` with stdout piped and returns the first stdout line `pick` accepts (lines are
/// read on a thread, so a silent child fails the test after [`PATIENCE`] instead of hanging).
fn start_and_read(
    mut cmd: Command,
    what: &str,
    pick: fn(&str) -> Option<String>,
) -> (Proc, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {what}: {e}"));
    let out = child.stdout.take().expect("stdout piped");
    let proc = Proc(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if let Some(v) = pick(&line) {
                let _ = tx.send(v);
            }
        }
    });
    let found = rx
        .recv_timeout(PATIENCE)
        .unwrap_or_else(|_| panic!("{what} did not say where it listens"));
    (proc, found)
}

/// `rewind serve ARGS` on a free loopback port: its base URL and the URL that signs a browser
/// in (`/login?token=`, made from the token file its JSON line names: the line itself never
/// holds the token).
fn serve(env: &Env, args: &[&str]) -> (Proc, String, String) {
    let mut cmd = env.cmd();
    cmd.args(["--json", "serve", "--listen", "127.0.0.1:0"])
        .args(args);
    let (proc, line) = start_and_read(cmd, "rewind serve", |line| {
        let v: Value = serde_json::from_str(line).ok()?;
        v.get("listening")?;
        Some(line.to_string())
    });
    let v: Value = serde_json::from_str(&line).expect("serve's JSON line");
    let url = v["listening"]
        .as_str()
        .expect("listening")
        .trim_end_matches('/');
    let page = v["page"].as_str().expect("the page's URL");
    assert!(
        !page.contains("token"),
        "the JSON line holds no token: {page}"
    );
    let file = v["token_file"].as_str().expect("a token file by default");
    let token = std::fs::read_to_string(file).expect("the token file");
    let login = format!("{url}/login?token={}", token.trim());
    (proc, url.to_string(), login)
}

/// One request to chromedriver's WebDriver endpoint on loopback; the status and the body
/// (ureq, as the API tests use; statuses are not errors here: the body says what went wrong).
fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> (u16, Vec<u8>) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(PATIENCE))
        .build()
        .into();
    let url = format!("http://127.0.0.1:{port}{path}");
    let r = match method {
        "POST" => agent
            .post(&url)
            .header("Content-Type", "application/json")
            .send(body.map(Value::to_string).unwrap_or_default()),
        "DELETE" => agent.delete(&url).call(),
        _ => agent.get(&url).call(),
    };
    let mut r = r.unwrap_or_else(|e| panic!("WebDriver {method} {path}: {e}"));
    let status = r.status().as_u16();
    let body = r.body_mut().read_to_vec().expect("WebDriver's reply");
    (status, body)
}

/// chromedriver and one headless Chromium session.
struct Browser {
    port: u16,
    session: String,
    _profile: tempfile::TempDir,
    _driver: Proc,
}

impl Browser {
    fn start() -> Browser {
        let mut cmd = Command::new("chromedriver");
        cmd.arg("--port=0");
        let (driver, port) = start_and_read(cmd, "chromedriver", |line| {
            let rest = line.split("started successfully on port ").nth(1)?;
            Some(rest.trim_end_matches('.').trim().to_string())
        });
        let port: u16 = port.parse().expect("chromedriver's port");
        let profile = tempfile::tempdir().expect("profile dir");
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1000", "--no-first-run", "--no-default-browser-check",
                format!("--user-data-dir={}", profile.path().display()),
            ]},
            "timeouts": {"pageLoad": PATIENCE.as_millis() as u64, "script": 30_000},
        }}});
        let (status, body) = http(port, "POST", "/session", Some(&caps));
        let v: Value = serde_json::from_slice(&body).expect("session JSON");
        assert_eq!(status, 200, "starting a Chromium session: {v}");
        let session = v["value"]["sessionId"]
            .as_str()
            .expect("a session id")
            .to_string();
        Browser {
            port,
            session,
            _profile: profile,
            _driver: driver,
        }
    }

    /// A WebDriver command of this session; its `value`.
    fn cmd(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = format!("/session/{}{path}", self.session);
        let (status, reply) = http(self.port, method, &url, body.as_ref());
        let v: Value = serde_json::from_slice(&reply).unwrap_or_else(|_| {
            panic!(
                "WebDriver {method} {path}: {}",
                String::from_utf8_lossy(&reply)
            )
        });
        assert_eq!(status, 200, "WebDriver {method} {path}: {v}");
        v["value"].clone()
    }

    fn goto(&self, url: &str) {
        self.cmd("POST", "/url", Some(json!({ "url": url })));
    }

    /// Runs `script` (a function body; `arguments` are `args`) in the page; its result.
    fn js(&self, script: &str, args: Value) -> Value {
        self.cmd(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": args})),
        )
    }

    /// The WebDriver id of the one element `css` selects.
    fn element(&self, css: &str) -> String {
        let el = self.cmd(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        );
        el.as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no element {css}"))
            .to_string()
    }

    /// Clicks the one element `css` selects, as a user would (a real pointer click).
    fn click(&self, css: &str) {
        let id = self.element(css);
        self.cmd("POST", &format!("/element/{id}/click"), Some(json!({})));
    }

    /// Types `text` into the field `css` selects, key by key.
    fn type_into(&self, css: &str, text: &str) {
        let id = self.element(css);
        self.cmd(
            "POST",
            &format!("/element/{id}/value"),
            Some(json!({ "text": text })),
        );
    }

    /// Waits until `script` returns true, failing with `what` and the page's message after
    /// [`PATIENCE`].
    fn wait_for(&self, what: &str, script: &str, args: Value) {
        let start = Instant::now();
        loop {
            if self.js(script, args.clone()) == Value::Bool(true) {
                return;
            }
            if start.elapsed() > PATIENCE {
                let msg = self.js(
                    "var m = document.getElementById('message'); return m ? m.textContent : '';",
                    json!([]),
                );
                panic!("timed out waiting for: {what} (page message: {msg})");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Clicks `css` (a button that posts to the API and reloads), then waits for the reloaded
    /// page and for `done` (a script returning true) to hold in it.
    fn click_and_wait(&self, css: &str, what: &str, done: &str, args: Value) {
        // A mark on the old document: gone once the page has reloaded.
        self.js("window.__beforeClick = true; return true;", json!([]));
        self.click(css);
        let script = format!(
            "if (window.__beforeClick || document.readyState !== 'complete') return false; {done}"
        );
        self.wait_for(what, &script, args);
    }

    /// Whether an element matches `css`.
    fn exists(&self, css: &str) -> bool {
        self.js(
            "return document.querySelector(arguments[0]) !== null;",
            json!([css]),
        ) == Value::Bool(true)
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let url = format!("/session/{}", self.session);
        let _ = std::panic::catch_unwind(|| http(self.port, "DELETE", &url, None));
    }
}

/// 20 numbered lines; far enough apart that a change at line 2 and one at line 18 are two
/// hunks.
fn app_py(first: &str, last: &str) -> Vec<u8> {
    let mut s = String::new();
    for i in 1..=20 {
        match i {
            2 => s.push_str(first),
            18 => s.push_str(last),
            _ => s.push_str(&format!("x{i} = {i}  # line {i}\n")),
        }
    }
    s.into_bytes()
}

/// Registers the workspace, snapshots it and creates a copy overlay; returns the overlay's
/// directory of files.
fn overlay_on(env: &Env) -> std::path::PathBuf {
    env.ok(&["snapshot", "-m", "base"]);
    env.ok(&["overlay", "create", "--name", "review", "--backend", "copy"]);
    std::path::PathBuf::from(env.ok(&["overlay", "path", "review"]).trim())
}

/// Opens the login URL: the browser holds the page's cookie from then on.
fn sign_in(b: &Browser, login: &str) {
    b.goto(login);
    b.wait_for(
        "the workspaces after signing in",
        "return document.getElementById('workspaces') !== null;",
        json!([]),
    );
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

#[test]
fn accept_and_reject_hunks_and_files_then_undo() {
    let Some(b) = browser() else { return };
    let env = Env::new();
    let base_app = app_py("def f():\n", "    return 1\n");
    env.write("src/app.py", &base_app);
    env.write("notes.txt", b"notes: first\n");
    env.write("old.txt", b"to be deleted\n");
    env.write("keep.txt", b"untouched\n");
    let ov = overlay_on(&env);
    let ours_app = app_py("def f(x):\n", "    return x + 1\n");
    common::write_file(&ov, b"src/app.py", &ours_app);
    common::write_file(&ov, b"notes.txt", b"notes: second\n");
    common::write_file(&ov, b"new.txt", b"brand new\n");
    std::fs::remove_file(ov.join("old.txt")).expect("delete in overlay");

    let (_server, url, login) = serve(&env, &[]);
    sign_in(&b, &login);
    b.goto(&format!("{url}/overlay/review"));
    b.wait_for(
        "the overlay's review",
        "return document.querySelectorAll('section.file').length === 4;",
        json!([]),
    );
    let hunks = b.js(
        "return Array.from(document.querySelectorAll(\
         'section.file[data-path=\"src/app.py\"] .hunk')).map(h => h.dataset.hunk);",
        json!([]),
    );
    let hunks: Vec<String> = serde_json::from_value(hunks).expect("hunk ids");
    assert_eq!(hunks.len(), 2, "src/app.py has two hunks: {hunks:?}");
    // Colouring: `def` is a keyword of Python.
    assert!(b.exists("section.file[data-path=\"src/app.py\"] .hl-k"));

    // Accept the first hunk: it is merged into the workspace and shown as accepted.
    b.click_and_wait(
        &format!(".hunk[data-hunk=\"{}\"] button.accept", hunks[0]),
        "the first hunk accepted",
        "return document.querySelector('.hunk.settled[data-hunk=\"' + arguments[0] + '\"]') !== null;",
        json!([hunks[0]]),
    );
    assert_eq!(
        read(&env.path("src/app.py")),
        app_py("def f(x):\n", "    return 1\n"),
        "the accepted hunk only"
    );

    // Reject the second: the file is settled and leaves the review.
    b.click_and_wait(
        &format!(".hunk[data-hunk=\"{}\"] button.reject", hunks[1]),
        "the second hunk rejected",
        "return document.querySelector('section.file[data-path=\"src/app.py\"]') === null;",
        json!([]),
    );
    assert_eq!(
        read(&ov.join("src/app.py")),
        app_py("def f(x):\n", "    return 1\n")
    );

    // Whole files: accept a change and a deletion, reject an addition.
    let gone = "return document.querySelector('section.file[data-path=\"' + arguments[0] + '\"]') === null;";
    b.click_and_wait(
        "section.file[data-path=\"notes.txt\"] > header button.accept",
        "notes.txt accepted",
        gone,
        json!(["notes.txt"]),
    );
    b.click_and_wait(
        "section.file[data-path=\"new.txt\"] > header button.reject",
        "new.txt rejected",
        gone,
        json!(["new.txt"]),
    );
    b.click_and_wait(
        "section.file[data-path=\"old.txt\"] > header button.accept",
        "old.txt's deletion accepted",
        "return document.getElementById('nothing-pending') !== null;",
        json!([]),
    );
    assert!(!env.path("old.txt").exists(), "the deletion was accepted");

    // Undo takes the last accept back: old.txt is back on disk and pending again.
    b.click_and_wait(
        "button.undo",
        "the undo",
        "return document.querySelector('section.file[data-path=\"old.txt\"]') !== null;",
        json!([]),
    );
    assert!(
        !b.exists("section.file[data-path=\"new.txt\"]"),
        "undo took back the accept only"
    );

    // The workspace, byte for byte, and nothing else in it.
    assert_eq!(
        read(&env.path("src/app.py")),
        app_py("def f(x):\n", "    return 1\n")
    );
    assert_eq!(read(&env.path("notes.txt")), b"notes: second\n");
    assert_eq!(read(&env.path("old.txt")), b"to be deleted\n");
    assert_eq!(read(&env.path("keep.txt")), b"untouched\n");
    assert!(!env.path("new.txt").exists(), "a rejected file stays out");
    let mut names: Vec<String> = std::fs::read_dir(&env.ws)
        .expect("list workspace")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["keep.txt", "notes.txt", "old.txt", "src"]);
    assert!(
        !ov.join("new.txt").exists(),
        "the rejected addition left the overlay"
    );
}

#[test]
fn markup_in_names_contents_and_messages_is_shown_as_text() {
    let Some(b) = browser() else { return };
    let env = Env::new();
    let name = "<img src=x onerror=\"window.__pwned=1\">.py";
    let content = "s = \"</td></tr><script>window.__pwned=2</script>\"\n";
    env.write("plain.txt", b"one\n");
    env.ok(&["snapshot", "-m", "<script>window.__pwned=3</script>"]);
    env.write(name, content.as_bytes());
    env.write("plain.txt", b"<b>two</b>\n");
    let ov = overlay_on(&env);
    common::write_file(&ov, b"plain.txt", b"<i onmouseover=x>three</i>\n");

    let (_server, url, login) = serve(&env, &[]);
    sign_in(&b, &login);
    for page in [
        "/",
        "/w/1",
        "/w/1/diff?from=%40~2&to=live",
        "/overlay/review",
    ] {
        b.goto(&format!("{url}{page}"));
        b.wait_for(
            "the page",
            "return document.readyState === 'complete' && document.querySelector('main') !== null;",
            json!([]),
        );
        assert_eq!(
            b.js("return window.__pwned === undefined;", json!([])),
            Value::Bool(true),
            "markup ran on {page}"
        );
        assert!(
            !b.exists("main img, main script, main i, main b"),
            "markup became elements on {page}"
        );
    }
    // The diff shows the file's name and content as text, exactly.
    b.goto(&format!("{url}/w/1/diff?from=%40~2&to=live"));
    let shown = b.js(
        "return Array.from(document.querySelectorAll('section.file .name')).map(n => n.textContent);",
        json!([]),
    );
    assert!(
        shown
            .as_array()
            .is_some_and(|a| a.iter().any(|n| n == name)),
        "the name as text: {shown} in {}",
        b.js("return document.documentElement.outerHTML;", json!([]))
    );
    let text = b.js(
        "return Array.from(document.querySelectorAll('td.tx')).map(t => t.textContent).join('\\n');",
        json!([]),
    );
    let text = text.as_str().unwrap_or_default();
    assert!(
        text.contains(content.trim_end()),
        "the content as text: {text}"
    );
    assert!(text.contains("<b>two</b>"), "{text}");
    b.goto(&format!("{url}/w/1"));
    let msgs = b.js(
        "return document.getElementById('snapshots').textContent;",
        json!([]),
    );
    assert!(
        msgs.as_str()
            .is_some_and(|m| m.contains("<script>window.__pwned=3</script>")),
        "the message as text: {msgs}"
    );
}

#[test]
fn the_login_url_signs_in_and_the_buttons_work() {
    let Some(b) = browser() else { return };
    let env = Env::new();
    env.write("a.txt", b"one\n");
    let ov = overlay_on(&env);
    common::write_file(&ov, b"a.txt", b"two\n");
    let (_server, url, page) = serve(&env, &[]);

    // Without the cookie the page asks for the token; a wrong one is refused.
    b.goto(&format!("{url}/overlay/review"));
    b.wait_for(
        "the sign-in form",
        "return document.querySelector('input[name=token]') !== null;",
        json!([]),
    );
    b.type_into("input[name=token]", "not-the-token");
    b.click_and_wait(
        "form button[type=submit]",
        "the wrong token refused",
        "return document.getElementById('login-error') !== null;",
        json!([]),
    );
    assert!(!b.exists("#workspaces"));

    // The login URL (`rewind serve` prints it on a terminal) sets the cookie; the page and its
    // buttons then work.
    b.goto(&page);
    b.wait_for(
        "the workspaces after signing in",
        "return document.getElementById('workspaces') !== null;",
        json!([]),
    );
    b.goto(&format!("{url}/overlay/review"));
    b.click_and_wait(
        "section.file[data-path=\"a.txt\"] > header button.accept",
        "a.txt accepted with the cookie",
        "return document.getElementById('nothing-pending') !== null;",
        json!([]),
    );
    assert_eq!(read(&env.path("a.txt")), b"two\n");
}

/// A button whose API call fails shows the API's sentence (`{"code", "error"}`), with its code,
/// not the response's raw JSON.
#[test]
fn a_failed_action_shows_the_api_error_text() {
    let Some(b) = browser() else { return };
    let env = Env::new();
    env.write("a.txt", b"one\n");
    let ov = overlay_on(&env);
    common::write_file(&ov, b"a.txt", b"two\n");
    let (_server, url, login) = serve(&env, &[]);
    sign_in(&b, &login);
    b.goto(&format!("{url}/overlay/review"));
    b.wait_for(
        "the overlay's review",
        "return document.querySelector('section.file[data-path=\"a.txt\"]') !== null;",
        json!([]),
    );
    // The overlay goes away behind the page's back: its accept button now names nothing.
    env.ok(&["overlay", "drop", "review"]);
    // A failed action does not reload the page: it shows the error in place.
    b.click("section.file[data-path=\"a.txt\"] > header button.accept");
    b.wait_for(
        "the failed accept's message",
        "var m = document.getElementById('message'); \
         return m !== null && m.textContent.indexOf('no overlay') >= 0;",
        json!([]),
    );
    let shown = b.js(
        "return document.getElementById('message').textContent;",
        json!([]),
    );
    let shown = shown.as_str().expect("the message's text");
    assert!(
        shown.starts_with("[not_found] no overlay") && !shown.contains('{'),
        "the API's sentence and code, not its JSON: {shown}"
    );
    assert_eq!(read(&env.path("a.txt")), b"one\n", "nothing was accepted");
}

/// A page on another origin (another port of 127.0.0.1: the same *site*, so the page's
/// SameSite=Strict cookie goes along): serves `html` to every request until dropped.
struct OtherOrigin {
    url: String,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl OtherOrigin {
    fn start(html: String) -> OtherOrigin {
        use std::io::{Read, Write};
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", l.local_addr().expect("address"));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop2 = stop.clone();
        std::thread::spawn(move || {
            for conn in l.incoming() {
                if stop2.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                let Ok(mut c) = conn else { continue };
                let mut buf = [0u8; 8192];
                let _ = c.read(&mut buf);
                let _ = write!(
                    c,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{html}",
                    html.len()
                );
            }
        });
        OtherOrigin { url, stop }
    }
}

impl Drop for OtherOrigin {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(self.url.trim_start_matches("http://"));
    }
}

#[test]
fn a_page_on_another_origin_cannot_run_apply_or_listen() {
    let Some(b) = browser() else { return };
    let env = Env::new();
    env.write("a.txt", b"one\n");
    env.ok(&["snapshot", "-m", "base"]);
    let marker = env.tmp.path().join("ran-from-another-origin");
    let (_server, url, login) = serve(&env, &[]);
    // The victim is signed in: the browser holds the page's cookie.
    sign_in(&b, &login);
    let before = common::list_disk(&env.ws);

    // What a hostile page does: a no-cors text/plain fetch to run a command, a text/plain
    // form posting a patch (its body `x=` then the patch), an EventSource with credentials.
    let run_body = json!({"command": ["touch", marker.to_str().expect("utf-8")]}).to_string();
    let html = format!(
        r#"<!doctype html><html><body>
<iframe name="sink" id="sink"></iframe>
<form id="f" method="POST" action="{url}/v1/workspaces/1/apply" enctype="text/plain" target="sink">
<input type="hidden" name="x" id="x"></form>
<script>
window.__r = {{}};
fetch("{url}/v1/workspaces/1/run", {{method: "POST", mode: "no-cors", credentials: "include",
  headers: {{"Content-Type": "text/plain"}}, body: {run_body:?}}})
  .then(function () {{ __r.fetch = "answered"; }}, function (e) {{ __r.fetch = "failed"; }});
document.getElementById("x").value =
  "\n--- /dev/null\n+++ b/pwned.txt\n@@ -0,0 +1 @@\n+pwned\n";
// Loaded from the server, the frame's document is another origin's: reading it throws.
document.getElementById("sink").onload = function () {{
  try {{ this.contentWindow.location.href; }} catch (e) {{ __r.form = "answered"; }}
}};
document.getElementById("f").submit();
var es = new EventSource("{url}/v1/events?replay=true", {{withCredentials: true}});
es.onopen = function () {{ __r.esOpen = true; }};
es.onmessage = function () {{ __r.esMessage = true; }};
es.onerror = function () {{ __r.es = "error"; es.close(); }};
</script></body></html>"#
    );
    let other = OtherOrigin::start(html);
    b.goto(&format!("{}/", other.url));
    // Every attempt answered (a no-cors fetch resolves once the server has answered, after a
    // run that waits; the frame holds the server's answer to the form).
    b.wait_for(
        "the hostile page's three requests answered",
        "return !!(window.__r && __r.fetch && __r.form && __r.es);",
        json!([]),
    );
    let r = b.js("return window.__r;", json!([]));
    assert!(!marker.exists(), "another origin ran a command: {r}");
    assert_eq!(
        common::list_disk(&env.ws),
        before,
        "another origin wrote to the workspace: {r}"
    );
    assert!(
        r.get("esOpen").is_none() && r.get("esMessage").is_none(),
        "another origin read the event stream: {r}"
    );
    // Nothing recorded either: the op log holds the snapshot only.
    let log: Value = serde_json::from_str(&env.ok(&["--json", "op", "log"])).expect("op log");
    assert_eq!(log.as_array().map(Vec::len), Some(1), "{log}");
}
