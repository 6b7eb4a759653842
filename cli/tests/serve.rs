//! `rewind serve` over real HTTP on loopback: the server is the real binary started by each
//! test (port 0, stopped at the end), against a real store and real workspaces. Every route of
//! the router is called and its JSON checked against serve/openapi.json.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::sync::Mutex;

use serde_json::{Value, json};

use crate::common::Env;

/// A `rewind serve` child process.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The token it requires (read from the token file its first line names).
    pub token: Option<String>,
}

impl Server {
    /// Starts `rewind serve --listen 127.0.0.1:0` (plus `extra`) on the env's store and waits
    /// for the line saying where it listens.
    pub fn start(env: &Env, extra: &[&str]) -> Server {
        let mut child = env
            .cmd()
            .args(["--json", "serve", "--listen", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn rewind serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read the listening line");
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
        let url = v["listening"].as_str().expect("listening").to_string();
        let token = v["token_file"].as_str().map(|f| {
            std::fs::read_to_string(f)
                .expect("the token file")
                .trim()
                .to_string()
        });
        Server { child, url, token }
    }

    /// A client of this server holding its token.
    pub fn api(&self) -> Api {
        let mut api = Api::new(&self.url);
        api.token = self.token.clone();
        api
    }

    /// `Authorization: Bearer TOKEN` (no token: an empty header the server ignores).
    pub fn bearer(&self) -> String {
        format!("Bearer {}", self.token.as_deref().unwrap_or_default())
    }

    /// The server's peak resident memory (VmHWM), KiB.
    pub fn peak_rss_kib(&self) -> u64 {
        rss_field(self.child.id(), "VmHWM:")
    }

    /// The server's resident memory now (VmRSS), KiB.
    pub fn rss_kib(&self) -> u64 {
        rss_field(self.child.id(), "VmRSS:")
    }
}

fn rss_field(pid: u32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    s.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .expect("field")
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response: status, headers we look at, body.
pub struct Resp {
    pub status: u16,
    pub content_type: String,
    pub content_range: Option<String>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "{e}: {} {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }
    pub fn code(&self) -> String {
        self.json()["code"].as_str().unwrap_or("").to_string()
    }
}

/// An HTTP client of one server (ureq: blocking, small; statuses are not errors here).
pub struct Api {
    agent: ureq::Agent,
    pub base: String,
    pub token: Option<String>,
    /// Route templates called, for the coverage check.
    hits: Mutex<BTreeSet<(String, String)>>,
}

impl Api {
    pub fn new(base: &str) -> Api {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        Api {
            agent,
            base: base.to_string(),
            token: None,
            hits: Mutex::new(BTreeSet::new()),
        }
    }

    fn finish(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Resp {
        let mut r = r.expect("request");
        let h = |n: &str| {
            r.headers()
                .get(n)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let content_type = h("content-type").unwrap_or_default();
        let content_range = h("content-range");
        let status = r.status().as_u16();
        let mut body = Vec::new();
        r.body_mut()
            .as_reader()
            .read_to_end(&mut body)
            .expect("body");
        Resp {
            status,
            content_type,
            content_range,
            body,
        }
    }

    /// `method path` (path after the base), with an optional body; `template` is the route.
    pub fn call(&self, method: &str, template: &str, path: &str, body: Option<&[u8]>) -> Resp {
        self.hits
            .lock()
            .unwrap()
            .insert((method.to_string(), template.to_string()));
        self.raw(method, path, body, &[])
    }

    /// A request without coverage bookkeeping, with extra headers.
    pub fn raw(
        &self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
        headers: &[(&str, &str)],
    ) -> Resp {
        let url = format!("{}{path}", self.base);
        let auth = self.token.as_ref().map(|t| format!("Bearer {t}"));
        // The body type each route declares, unless the caller sets one.
        let given = headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"));
        let kind = match method {
            _ if given => None,
            "PUT" => Some("application/octet-stream"),
            "POST" if path.split('?').next().unwrap_or("").ends_with("/apply") => {
                Some("text/x-diff")
            }
            "POST" => Some("application/json"),
            _ => None,
        };
        macro_rules! go {
            ($b:expr) => {{
                let mut b = $b;
                if let Some(a) = &auth {
                    b = b.header("Authorization", a);
                }
                if let Some(k) = kind {
                    b = b.header("Content-Type", k);
                }
                for (k, v) in headers {
                    b = b.header(*k, *v);
                }
                b
            }};
        }
        let r = match method {
            "GET" => go!(self.agent.get(&url)).call(),
            "DELETE" => go!(self.agent.delete(&url)).call(),
            "POST" => go!(self.agent.post(&url)).send(body.unwrap_or_default()),
            "PUT" => go!(self.agent.put(&url)).send(body.unwrap_or_default()),
            m => panic!("method {m}"),
        };
        Self::finish(r)
    }

    pub fn get(&self, template: &str, path: &str) -> Resp {
        self.call("GET", template, path, None)
    }
    pub fn post(&self, template: &str, path: &str, body: Value) -> Resp {
        self.call("POST", template, path, Some(body.to_string().as_bytes()))
    }
}

/// The OpenAPI document.
fn openapi() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../serve/openapi.json"
    ))
    .expect("serve/openapi.json");
    serde_json::from_str(&text).expect("openapi.json parses")
}

/// The router's (method, path) pairs in OpenAPI's syntax (`{*path}` is `{path}`).
fn router_routes() -> BTreeSet<(String, String)> {
    rewind_serve::api::table()
        .into_iter()
        .map(|(m, p, _)| (m.to_string(), p.replace("{*", "{")))
        .collect()
}

#[test]
fn openapi_document_and_router_agree() {
    let doc = openapi();
    let mut documented = BTreeSet::new();
    for (path, ops) in doc["paths"].as_object().expect("paths") {
        for method in ops.as_object().expect("ops").keys() {
            documented.insert((method.to_uppercase(), path.clone()));
        }
    }
    let routed = router_routes();
    let undocumented: Vec<_> = routed.difference(&documented).collect();
    let unrouted: Vec<_> = documented.difference(&routed).collect();
    assert!(
        undocumented.is_empty() && unrouted.is_empty(),
        "routes missing from openapi.json: {undocumented:?}; documented but not routed: {unrouted:?}"
    );
}

/// Checks a JSON response against the document's schema for (method, template, status).
fn check_schema(doc: &Value, method: &str, template: &str, r: &Resp) {
    let path = template.replace("{*", "{");
    let op = &doc["paths"][&path][method.to_lowercase()];
    assert!(op.is_object(), "{method} {path} not in openapi.json");
    let status = r.status.to_string();
    let Some(content) = op["responses"][&status]["content"].as_object() else {
        panic!("{method} {path}: status {status} not documented");
    };
    let Some(schema) = content.get("application/json").map(|c| &c["schema"]) else {
        return;
    };
    let wrapped = json!({"allOf": [schema], "components": doc["components"]});
    let validator = jsonschema::validator_for(&wrapped).expect("schema compiles");
    let v = r.json();
    let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
    assert!(
        errors.is_empty(),
        "{method} {path} {status}: {errors:?}\n{v}"
    );
}

/// A workspace with history: two snapshots, then live edits.
fn setup() -> Env {
    let env = Env::new();
    env.write("a.txt", b"one\ntwo\nthree\n");
    env.write("dir/b.txt", b"bee\n");
    env.ok(&["init"]);
    env.ok(&["snapshot", "-m", "first", "--meta", "k=v"]);
    env.write("a.txt", b"one\nTWO\nthree\n");
    env.write("dir/c.txt", b"sea\n");
    env.ok(&["snapshot", "-m", "second"]);
    env.write("a.txt", b"one\nTWO\nthree\nfour\n");
    env
}

#[test]
fn every_route_over_http_matches_the_document() {
    let env = setup();
    let srv = Server::start(&env, &[]);
    let api = srv.api();
    let doc = openapi();
    let check = |m: &str, t: &str, r: &Resp| check_schema(&doc, m, t, r);

    let t = "/v1/health";
    let r = api.get(t, t);
    assert_eq!(r.status, 200);
    check("GET", t, &r);

    let t = "/v1/workspaces";
    let r = api.get(t, t);
    check("GET", t, &r);
    let ws = r.json()[0]["id"].as_u64().expect("a workspace");
    let w = format!("/v1/workspaces/{ws}");

    let t = "/v1/openapi.json";
    let r = api.get(t, t);
    assert_eq!(r.json(), doc, "the served document is serve/openapi.json");

    let t = "/v1/workspaces";
    let other = env.tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let r = api.post(
        t,
        t,
        json!({"path": other.canonicalize().unwrap().to_str().unwrap()}),
    );
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    check("POST", t, &r);
    let r = api.post(
        t,
        t,
        json!({"path": other.canonicalize().unwrap().to_str().unwrap()}),
    );
    assert_eq!(r.status, 200, "a known workspace");
    check("POST", t, &r);

    let t = "/v1/workspaces/{ws}";
    let r = api.get(t, &w);
    check("GET", t, &r);
    assert_eq!(r.json()["snapshots"], 2);

    let t = "/v1/workspaces/{ws}/snapshots";
    let r = api.get(t, &format!("{w}/snapshots"));
    check("GET", t, &r);
    let log = r.json();
    assert_eq!(log.as_array().unwrap().len(), 2);
    assert_eq!(log[0]["message"], "second");
    let (first, second) = (
        log[1]["id"].as_str().unwrap().to_string(),
        log[0]["id"].as_str().unwrap().to_string(),
    );
    let r = api.get(t, &format!("{w}/snapshots?meta=k%3Dv"));
    assert_eq!(r.json().as_array().unwrap().len(), 1, "meta filter");
    let r = api.get(t, &format!("{w}/snapshots?path=dir%2Fc.txt"));
    let rows = r.json();
    assert_eq!(rows.as_array().unwrap().len(), 1, "path filter: {rows}");
    assert_eq!(rows[0]["change"]["status"], "added");

    let t = "/v1/workspaces/{ws}/snapshots/{rev}";
    let r = api.get(t, &format!("{w}/snapshots/@"));
    check("GET", t, &r);
    let changes = r.json()["changes"].clone();
    let paths: BTreeSet<&str> = changes
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, BTreeSet::from(["a.txt", "dir/c.txt"]));

    let t = "/v1/workspaces/{ws}/tree/{rev}";
    let r = api.get(t, &format!("{w}/tree/@?path=dir"));
    check("GET", t, &r);
    let names: Vec<String> = r.json()["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["b.txt", "c.txt"]);

    let t = "/v1/workspaces/{ws}/files/{rev}/{*path}";
    let r = api.get(t, &format!("{w}/files/@~1/a.txt"));
    assert_eq!(
        (r.status, r.body.as_slice()),
        (200, &b"one\ntwo\nthree\n"[..])
    );
    check("GET", t, &r);
    let r = api.raw(
        "GET",
        &format!("{w}/files/@/a.txt"),
        None,
        &[("Range", "bytes=4-6")],
    );
    assert_eq!((r.status, r.body.as_slice()), (206, &b"TWO"[..]));
    assert_eq!(r.content_range.as_deref(), Some("bytes 4-6/14"));
    let r = api.raw(
        "GET",
        &format!("{w}/files/live/a.txt"),
        None,
        &[("Range", "bytes=-5")],
    );
    assert_eq!((r.status, r.body.as_slice()), (206, &b"four\n"[..]));
    let r = api.raw(
        "GET",
        &format!("{w}/files/@/a.txt"),
        None,
        &[("Range", "bytes=100-")],
    );
    assert_eq!(
        (r.status, r.code().as_str()),
        (416, "range_not_satisfiable")
    );

    let t = "/v1/workspaces/{ws}/status";
    let r = api.get(t, &format!("{w}/status"));
    check("GET", t, &r);
    assert_eq!(r.json()["clean"], false);

    let t = "/v1/workspaces/{ws}/diff";
    let r = api.get(t, &format!("{w}/diff?from=%40~1&to=%40"));
    check("GET", t, &r);
    let d = r.json();
    assert_eq!(d["totals"]["files_changed"], 2);
    let a = d["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "a.txt")
        .unwrap();
    assert_eq!(
        a["hunks"][0]["lines"],
        json!([" one\n", "-two\n", "+TWO\n", " three\n"])
    );
    let r = api.get(t, &format!("{w}/diff?format=patch"));
    assert_eq!(r.status, 200);
    assert!(
        r.content_type.starts_with("text/x-diff"),
        "{}",
        r.content_type
    );
    let patch = String::from_utf8(r.body.clone()).unwrap();
    assert!(
        patch.contains("+four\n") && patch.starts_with("diff --git a/a.txt b/a.txt"),
        "{patch}"
    );

    // Restore one hunk of the live change (from live to @): the workspace loses "four".
    let r = api.get(t, &format!("{w}/diff?from=live&to=%40"));
    let hunk = r.json()["files"][0]["hunks"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let t = "/v1/workspaces/{ws}/restore";
    let r = api.post(
        t,
        &format!("{w}/restore"),
        json!({"rev": "@", "hunks": [hunk]}),
    );
    check("POST", t, &r);
    assert_eq!(
        std::fs::read(env.path("a.txt")).unwrap(),
        b"one\nTWO\nthree\n"
    );

    let t = "/v1/workspaces/{ws}/undo";
    let r = api.post(t, &format!("{w}/undo"), json!({}));
    check("POST", t, &r);
    assert_eq!(
        std::fs::read(env.path("a.txt")).unwrap(),
        b"one\nTWO\nthree\nfour\n"
    );
    let t = "/v1/workspaces/{ws}/redo";
    let r = api.post(t, &format!("{w}/redo"), json!({}));
    check("POST", t, &r);
    assert_eq!(
        std::fs::read(env.path("a.txt")).unwrap(),
        b"one\nTWO\nthree\n"
    );

    // Restore a path from the first snapshot; revert the first->second change of dir/.
    let t = "/v1/workspaces/{ws}/restore";
    let r = api.post(
        t,
        &format!("{w}/restore"),
        json!({"rev": first, "paths": ["a.txt"]}),
    );
    check("POST", t, &r);
    assert_eq!(
        std::fs::read(env.path("a.txt")).unwrap(),
        b"one\ntwo\nthree\n"
    );
    let t = "/v1/workspaces/{ws}/revert";
    let r = api.post(
        t,
        &format!("{w}/revert"),
        json!({"from": first, "to": second, "paths": ["dir"]}),
    );
    check("POST", t, &r);
    assert!(
        !env.path("dir/c.txt").exists(),
        "revert took dir/c.txt back out"
    );

    let t = "/v1/workspaces/{ws}/apply";
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n";
    let r = api.call(
        "POST",
        t,
        &format!("{w}/apply?check=true"),
        Some(patch.as_bytes()),
    );
    check("POST", t, &r);
    assert_eq!(
        std::fs::read(env.path("a.txt")).unwrap(),
        b"one\ntwo\nthree\n",
        "check writes nothing"
    );
    let r = api.call("POST", t, &format!("{w}/apply"), Some(patch.as_bytes()));
    check("POST", t, &r);
    assert_eq!(
        std::fs::read(env.path("a.txt")).unwrap(),
        b"one\n2\nthree\n"
    );
    let r = api.call("POST", t, &format!("{w}/apply"), Some(patch.as_bytes()));
    assert_eq!(
        (r.status, r.code().as_str()),
        (409, "conflict"),
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    check("POST", t, &r);

    let t = "/v1/workspaces/{ws}/snapshots";
    let r = api.post(
        t,
        &format!("{w}/snapshots"),
        json!({"message": "api", "meta": {"via": "http"}, "tags": ["viahttp"]}),
    );
    assert_eq!(r.status, 201);
    check("POST", t, &r);
    assert_eq!(r.json()["snapshot"]["tags"], json!(["viahttp"]));

    let t = "/v1/workspaces/{ws}/sessions";
    let r = api.get(t, &format!("{w}/sessions"));
    check("GET", t, &r);
    assert_eq!(r.json(), json!([]), "no snapshot names a session");
    let t = "/v1/workspaces/{ws}/runs";
    let r = api.get(t, &format!("{w}/runs?from=@~2&to=@"));
    check("GET", t, &r);
    assert_eq!(r.json()["units"], json!([]), "no run between them");
    let r = api.get(t, &format!("{w}/runs?from=@&to=@~2"));
    assert_eq!(r.status, 400);
    check("GET", t, &r);
    let t = "/v1/workspaces/{ws}/ops";
    let r = api.get(t, &format!("{w}/ops?limit=20"));
    check("GET", t, &r);
    let kinds: Vec<String> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap().to_string())
        .collect();
    for k in ["snapshot", "apply", "revert", "restore", "undo", "redo"] {
        assert!(kinds.iter().any(|x| x == k), "{k} missing from {kinds:?}");
    }

    let t = "/v1/workspaces/{ws}/run";
    let r = api.post(
        t,
        &format!("{w}/run"),
        json!({"command": ["sh", "-c", "echo ran > ran.txt"]}),
    );
    check("POST", t, &r);
    assert_eq!(r.json()["diff"]["files_changed"], 1);
    assert!(env.path("ran.txt").exists());
    let r = api.post(
        t,
        &format!("{w}/run"),
        json!({"command": ["true"], "wait": false}),
    );
    assert_eq!(r.status, 202);
    let started: rewind::wire::RunStarted = serde_json::from_value(r.json()).expect("a RunStarted");
    assert_eq!(started.status, rewind::wire::RunStatus::Running);
    let run = started.run;
    let t = "/v1/runs/{run}";
    let state = loop {
        let r = api.get(t, &format!("/v1/runs/{run}"));
        check("GET", t, &r);
        let v = r.json();
        if v["status"] != "running" {
            break v;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(state["status"], "finished", "{state}");
    let typed: rewind::wire::RunState = serde_json::from_value(state).expect("a RunState");
    assert_eq!(typed.run, run);
    assert!(typed.result.is_some() && typed.error.is_none(), "{typed:?}");

    // Overlays: create, run, diff with hunk ids, accept one hunk, reject another, drop.
    env.write(
        "two.txt",
        &(1..=20)
            .map(|i| format!("{i}\n"))
            .collect::<String>()
            .into_bytes(),
    );
    env.ok(&["snapshot"]);
    let t = "/v1/workspaces/{ws}/overlays";
    let r = api.post(
        t,
        &format!("{w}/overlays"),
        json!({"name": "ov1", "backend": "copy"}),
    );
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    check("POST", t, &r);
    let r = api.get(t, &format!("{w}/overlays"));
    check("GET", t, &r);
    assert_eq!(r.json()[0]["name"], "ov1");
    let t = "/v1/overlays";
    check("GET", t, &api.get(t, t));
    let t = "/v1/overlays/{ov}";
    let r = api.get(t, "/v1/overlays/ov1");
    check("GET", t, &r);
    let t = "/v1/overlays/{ov}/run";
    let r = api.post(
        t,
        "/v1/overlays/ov1/run",
        json!({"command": ["sh", "-c", "sed -i -e 's/^2$/TWO/' -e 's/^19$/NINETEEN/' two.txt"]}),
    );
    check("POST", t, &r);
    assert_eq!(
        std::fs::read_to_string(env.path("two.txt"))
            .unwrap()
            .lines()
            .nth(1),
        Some("2"),
        "the workspace is untouched"
    );
    let t = "/v1/overlays/{ov}/runs";
    let r = api.get(t, "/v1/overlays/ov1/runs");
    check("GET", t, &r);
    assert_eq!(r.json()["runs"][0]["run"], 1, "{}", r.json());
    let t = "/v1/overlays/{ov}/diff";
    let r = api.get(t, "/v1/overlays/ov1/diff");
    check("GET", t, &r);
    let hunks = r.json()["files"][0]["hunks"].clone();
    assert_eq!(hunks.as_array().unwrap().len(), 2, "{hunks}");
    let (h2, h19) = (
        hunks[0]["id"].as_str().unwrap(),
        hunks[1]["id"].as_str().unwrap(),
    );
    let t = "/v1/overlays/{ov}/split";
    let r = api.post(t, "/v1/overlays/ov1/split", json!({"hunk": h2}));
    check("POST", t, &r);
    assert_eq!(
        r.json()["parts"].as_array().map(Vec::len),
        Some(1),
        "one run of changes"
    );
    let t = "/v1/overlays/{ov}/snapshots";
    let r = api.post(
        t,
        "/v1/overlays/ov1/snapshots",
        json!({"message": "mid-review", "meta": {"turn": "3"}}),
    );
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    check("POST", t, &r);
    let checkpoint = r.json()["snapshot"]["id"].as_str().unwrap().to_string();
    assert_eq!(r.json()["snapshot"]["meta"]["turn"], "3");
    let t = "/v1/overlays/{ov}/accept";
    let r = api.post(t, "/v1/overlays/ov1/accept", json!({"hunks": [h2]}));
    check("POST", t, &r);
    let t = "/v1/overlays/{ov}/reject";
    let r = api.post(t, "/v1/overlays/ov1/reject", json!({"hunks": [h19]}));
    check("POST", t, &r);
    let two = std::fs::read_to_string(env.path("two.txt")).unwrap();
    assert!(
        two.contains("TWO\n") && two.contains("\n19\n") && !two.contains("NINETEEN"),
        "{two}"
    );
    let r = api.get("/v1/overlays/{ov}/diff", "/v1/overlays/ov1/diff");
    assert_eq!(r.json()["files"], json!([]), "nothing pending");
    let t = "/v1/overlays/{ov}";
    let r = api.call("DELETE", t, "/v1/overlays/ov1", None);
    check("DELETE", t, &r);
    assert_eq!(api.get(t, "/v1/overlays/ov1").status, 404);
    // The overlay's checkpoint outlives it and holds the overlay's state when it was taken.
    let r = api.get(
        "/v1/workspaces/{ws}/files/{rev}/{*path}",
        &format!("{w}/files/{checkpoint}/two.txt"),
    );
    let two = String::from_utf8(r.body).unwrap();
    assert!(two.contains("TWO\n") && two.contains("NINETEEN\n"), "{two}");

    // Artifacts.
    let t = "/v1/artifacts/{*key}";
    let r = api.call(
        "PUT",
        t,
        "/v1/artifacts/logs/build.txt?meta=kind%3Dlog",
        Some(b"built\n"),
    );
    assert_eq!(r.status, 201);
    check("PUT", t, &r);
    let r = api.call("PUT", t, "/v1/artifacts/logs/build.txt", Some(b"again\n"));
    assert_eq!((r.status, r.code().as_str()), (409, "conflict"));
    let r = api.get(t, "/v1/artifacts/logs/build.txt");
    assert_eq!(r.body, b"built\n");
    check("GET", t, &r);
    let t2 = "/v1/artifacts";
    let r = api.get(t2, t2);
    check("GET", t2, &r);
    assert_eq!(r.json()[0]["meta"]["kind"], "log");
    let r = api.call("DELETE", t, "/v1/artifacts/logs/build.txt", None);
    check("DELETE", t, &r);
    assert_eq!(
        api.get(t, "/v1/artifacts/logs/build.txt").code(),
        "not_found"
    );

    // Events: a snapshot taken by the CLI reaches a subscriber.
    let t = "/v1/events";
    api.hits.lock().unwrap().insert(("GET".into(), t.into()));
    // The event stream takes its token in the query (an EventSource cannot set headers).
    let token = srv.token.clone().expect("a token by default");
    let events = subscribe(
        &srv.url,
        &format!("/v1/events?workspace={ws}&token={token}"),
    );
    env.write("evented.txt", b"x\n");
    let out = env.ok(&["snapshot", "--json"]);
    let id = serde_json::from_str::<Value>(&out).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let got = wait_event(&events, |v| {
        v["event"] == "snapshot" && v["id"] == id.as_str()
    });
    assert_eq!(got["kind"], "snapshot");

    let hit = api.hits.lock().unwrap().clone();
    let missing: Vec<_> = router_routes()
        .into_iter()
        .filter(|(m, p)| {
            !hit.iter()
                .any(|(hm, hp)| hm == m && hp.replace("{*", "{") == *p)
        })
        .collect();
    assert!(
        missing.is_empty(),
        "routes this test never called: {missing:?}"
    );
}

/// Subscribes to server-sent events on a thread: each `data:` line's JSON arrives on the channel.
fn subscribe(base: &str, path: &str) -> std::sync::mpsc::Receiver<Value> {
    let (tx, rx) = std::sync::mpsc::channel();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let url = format!("{base}{path}");
    std::thread::spawn(move || {
        let r = ureq::get(&url).call().expect("events");
        let _ = ready_tx.send(());
        let reader = BufReader::new(r.into_body().into_reader());
        for line in reader.lines() {
            let Ok(line) = line else { return };
            if let Some(d) = line.strip_prefix("data: ")
                && let Ok(v) = serde_json::from_str(d)
                && tx.send(v).is_err()
            {
                return;
            }
        }
    });
    ready_rx.recv().expect("subscribed");
    rx
}

/// The first event matching `want` (the wait is generous: only a broken server takes it).
fn wait_event(rx: &std::sync::mpsc::Receiver<Value>, want: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let v = rx.recv_timeout(left).expect("the event came");
        if want(&v) {
            return v;
        }
    }
}

#[test]
fn token_errors_and_codes() {
    use std::os::unix::fs::PermissionsExt;
    let env = setup();
    let srv = Server::start(&env, &[]);
    let token_file = env.store.join("serve.token");
    let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the token file is owner-only");
    let token = std::fs::read_to_string(&token_file)
        .unwrap()
        .trim()
        .to_string();
    let mut api = Api::new(&srv.url);
    let r = api.raw("GET", "/v1/workspaces", None, &[]);
    assert_eq!(
        (r.status, r.code().as_str()),
        (401, "unauthorized"),
        "no token"
    );
    api.token = Some(format!("{}x", &token[..token.len() - 1]));
    let r = api.raw("GET", "/v1/workspaces", None, &[]);
    assert_eq!(
        (r.status, r.code().as_str()),
        (401, "unauthorized"),
        "wrong token"
    );
    api.token = Some(token.clone());
    assert_eq!(
        api.raw("GET", "/v1/workspaces", None, &[]).status,
        200,
        "right token"
    );
    // The page's cookie works too, but a write with it needs the page's header.
    let mut api2 = Api::new(&srv.url);
    api2.token = None;
    let cookie = format!("rewind_token={token}");
    assert_eq!(
        api2.raw("GET", "/v1/workspaces", None, &[("Cookie", &cookie)])
            .status,
        200
    );
    let r = api2.raw(
        "POST",
        "/v1/workspaces/1/snapshots",
        Some(b"{}"),
        &[("Cookie", &cookie)],
    );
    assert_eq!(r.status, 403);
    let r = api2.raw(
        "POST",
        "/v1/workspaces/1/snapshots",
        Some(b"{}"),
        &[("Cookie", &cookie), ("X-Rewind-Page", "1")],
    );
    assert_eq!(r.status, 201);

    // Error codes: the conditions the CLI exits 2 on.
    type Case<'a> = (&'a str, &'a str, Option<&'a [u8]>, u16, &'a str);
    let cases: &[Case] = &[
        ("GET", "/v1/workspaces/99", None, 404, "not_found"),
        ("GET", "/v1/workspaces/nope", None, 400, "bad_request"),
        (
            "GET",
            "/v1/workspaces/1/snapshots/ffffffffff",
            None,
            404,
            "not_found",
        ),
        (
            "GET",
            "/v1/workspaces/1/snapshots?limit=x",
            None,
            400,
            "bad_request",
        ),
        (
            "GET",
            "/v1/workspaces/1/diff?format=xml",
            None,
            400,
            "bad_request",
        ),
        (
            "POST",
            "/v1/workspaces/1/undo",
            Some(b"{not json"),
            400,
            "bad_request",
        ),
        (
            "POST",
            "/v1/workspaces/1/revert",
            Some(br#"{"hunks":["000000000000"]}"#),
            400,
            "bad_request",
        ),
        (
            "POST",
            "/v1/workspaces/1/apply",
            Some(b"not a patch at all"),
            400,
            "bad_request",
        ),
        ("GET", "/v1/overlays/nosuch", None, 404, "not_found"),
        ("GET", "/v1/artifacts/none", None, 404, "not_found"),
        ("GET", "/v1/runs/77", None, 404, "not_found"),
        ("GET", "/v1/nowhere", None, 404, "not_found"),
    ];
    for (m, p, b, status, code) in cases {
        let r = api.raw(m, p, *b, &[]);
        assert_eq!(
            (r.status, r.code()),
            (*status, code.to_string()),
            "{m} {p}: {}",
            String::from_utf8_lossy(&r.body)
        );
    }
}

#[test]
fn no_path_parameter_reaches_outside_the_workspace() {
    let env = setup();
    // A secret beside the workspace, and symlinks inside it pointing there.
    std::fs::write(env.tmp.path().join("secret.txt"), b"secret\n").unwrap();
    std::os::unix::fs::symlink(env.tmp.path(), env.path("up")).unwrap();
    std::os::unix::fs::symlink(env.tmp.path().join("secret.txt"), env.path("link.txt")).unwrap();
    let srv = Server::start(&env, &[]);
    let api = srv.api();
    let before = crate::common::list_disk(&env.ws);
    let bad_paths = [
        "..%2fsecret.txt",
        "%2e%2e/secret.txt",
        "%2E%2E%2Fsecret.txt",
        "dir/..%2f..%2fsecret.txt",
        "%2ftmp%2fsecret.txt",
        "./a.txt",
    ];
    let refused = |r: &Resp, what: &str| {
        assert!(
            matches!(r.status, 400 | 404) && !String::from_utf8_lossy(&r.body).contains("secret\n"),
            "{what}: {} {}",
            r.status,
            String::from_utf8_lossy(&r.body)
        );
        assert!(r.json()["code"].is_string(), "{what}: a JSON error");
    };
    for p in bad_paths {
        for rev in ["live", "@"] {
            refused(
                &api.raw(
                    "GET",
                    &format!("/v1/workspaces/1/files/{rev}/{p}"),
                    None,
                    &[],
                ),
                p,
            );
        }
        refused(
            &api.raw(
                "GET",
                &format!("/v1/workspaces/1/tree/@?path={p}"),
                None,
                &[],
            ),
            p,
        );
        for q in ["status", "diff", "snapshots"] {
            refused(
                &api.raw("GET", &format!("/v1/workspaces/1/{q}?path={p}"), None, &[]),
                p,
            );
        }
    }
    // An absolute path (a doubled slash) and the symlinks.
    for p in [
        "/v1/workspaces/1/files/live//etc/passwd",
        "/v1/workspaces/1/files/live/up/secret.txt",
        "/v1/workspaces/1/files/live/link.txt",
    ] {
        let r = api.raw("GET", p, None, &[]);
        assert_eq!(
            r.code(),
            "path_outside",
            "{p}: {}",
            String::from_utf8_lossy(&r.body)
        );
    }
    // Bodies naming paths.
    for p in [
        "../secret.txt",
        "/etc/passwd",
        "dir/../../secret.txt",
        "a/./b",
        "",
    ] {
        let paths = json!({"paths": [p]});
        for (route, body) in [
            (
                "/v1/workspaces/1/restore",
                json!({"rev": "@", "paths": [p]}),
            ),
            (
                "/v1/workspaces/1/revert",
                json!({"from": "@~1", "to": "@", "paths": [p]}),
            ),
        ] {
            let r = api.raw("POST", route, Some(body.to_string().as_bytes()), &[]);
            assert_eq!(r.code(), "path_outside", "{route} {p}");
        }
        let r = api.raw(
            "POST",
            "/v1/overlays/1/accept",
            Some(paths.to_string().as_bytes()),
            &[],
        );
        assert_eq!(r.code(), "path_outside", "accept {p}");
        let r = api.raw(
            "POST",
            "/v1/overlays/1/reject",
            Some(paths.to_string().as_bytes()),
            &[],
        );
        assert_eq!(r.code(), "path_outside", "reject {p}");
    }
    // A patch that climbs out is refused by apply, and writes nothing.
    let evil = "--- a/../secret.txt\n+++ b/../secret.txt\n@@ -1 +1 @@\n-secret\n+owned\n";
    let r = api.raw("POST", "/v1/workspaces/1/apply", Some(evil.as_bytes()), &[]);
    assert!(r.status >= 400, "{}", String::from_utf8_lossy(&r.body));
    // Artifact keys with `..`.
    let r = api.raw("PUT", "/v1/artifacts/..%2f..%2fx", Some(b"x"), &[]);
    assert_eq!(r.status, 400, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        std::fs::read(env.tmp.path().join("secret.txt")).unwrap(),
        b"secret\n"
    );
    assert_eq!(
        crate::common::list_disk(&env.ws),
        before,
        "nothing in the workspace changed"
    );
}

/// A body of `len` bytes made on the fly (compressible, not all the same).
struct Gen {
    left: u64,
    n: u64,
}

impl Read for Gen {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = (buf.len() as u64).min(self.left) as usize;
        for b in &mut buf[..k] {
            self.n = self.n.wrapping_add(1);
            *b = (self.n / 4096 % 251) as u8 ^ (self.n % 7) as u8;
        }
        self.left -= k as u64;
        Ok(k)
    }
}

fn artifact_round_trip(len: u64) -> (u64, u64) {
    let env = setup();
    let srv = Server::start(&env, &[]);
    let idle = srv.rss_kib();
    let url = format!("{}/v1/artifacts/big/blob", srv.url);
    let mut body = Gen { left: len, n: 0 };
    let r = ureq::put(&url)
        .header("Authorization", srv.bearer())
        .header("Content-Type", "application/octet-stream")
        .send(ureq::SendBody::from_reader(&mut body))
        .expect("put");
    assert_eq!(r.status().as_u16(), 201);
    // Read back and compare with the same generator, a block at a time.
    let r = ureq::get(&url)
        .header("Authorization", srv.bearer())
        .call()
        .expect("get");
    let mut got = r.into_body().into_reader();
    let mut want = Gen { left: len, n: 0 };
    let (mut a, mut b) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    let mut total = 0u64;
    loop {
        let n = got.read(&mut a).expect("read");
        if n == 0 {
            break;
        }
        want.read_exact(&mut b[..n]).expect("generator");
        assert!(a[..n] == b[..n], "bytes differ near {total}");
        total += n as u64;
    }
    assert_eq!(total, len);
    (idle, srv.peak_rss_kib())
}

#[test]
fn streamed_artifact_keeps_server_memory_bounded() {
    // 256 MiB here; the 2 GiB run is the ignored test below (and benches/serve.sh).
    let (idle, peak) = artifact_round_trip(256 << 20);
    assert!(
        peak < idle + 200 * 1024,
        "server peak RSS {peak} KiB (idle {idle} KiB) for a 256 MiB artifact"
    );
}

#[test]
#[ignore = "2 GiB through the server: about a minute; run with --ignored"]
fn streamed_artifact_2gib_keeps_server_memory_bounded() {
    let (idle, peak) = artifact_round_trip(2 << 30);
    eprintln!("2 GiB artifact: server idle {idle} KiB, peak {peak} KiB");
    assert!(
        peak < idle + 200 * 1024,
        "server peak RSS {peak} KiB (idle {idle} KiB)"
    );
}

#[test]
fn concurrent_clients_lose_nothing() {
    let env = setup();
    let srv = Server::start(&env, &[]);
    let base = srv.url.clone();
    let ws = env.ws.clone();
    let threads: Vec<_> = (0..32)
        .map(|c| {
            let base = base.clone();
            let token = srv.token.clone();
            let ws = ws.clone();
            std::thread::spawn(move || {
                let mut api = Api::new(&base);
                api.token = token;
                for i in 0..4 {
                    // A write: an artifact of this client, and a file then a snapshot.
                    let key = format!("/v1/artifacts/c{c}/{i}");
                    let r = api.raw("PUT", &key, Some(format!("{c}:{i}").as_bytes()), &[]);
                    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
                    std::fs::write(ws.join(format!("c{c}-{i}.txt")), format!("{c} {i}\n")).unwrap();
                    let r = api.raw("POST", "/v1/workspaces/1/snapshots", Some(b"{}"), &[]);
                    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
                    // Reads.
                    for p in [
                        "/v1/workspaces/1/snapshots?limit=5",
                        "/v1/workspaces/1/status",
                        "/v1/workspaces/1/ops?limit=5",
                        "/v1/workspaces/1/files/live/a.txt",
                    ] {
                        let r = api.raw("GET", p, None, &[]);
                        assert_eq!(r.status, 200, "{p}: {}", String::from_utf8_lossy(&r.body));
                    }
                    assert_eq!(
                        api.raw("GET", &key, None, &[]).body,
                        format!("{c}:{i}").into_bytes()
                    );
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("client");
    }
    let api = srv.api();
    let arts = api.raw("GET", "/v1/artifacts", None, &[]).json();
    assert_eq!(arts.as_array().unwrap().len(), 128, "every artifact");
    // The latest snapshot holds every client's files: no write was lost.
    let r = api.raw("POST", "/v1/workspaces/1/snapshots", Some(b"{}"), &[]);
    assert_eq!(r.status, 201);
    let tree = api.raw("GET", "/v1/workspaces/1/tree/@", None, &[]).json();
    let names: BTreeSet<String> = tree["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect();
    for c in 0..32 {
        for i in 0..4 {
            assert!(
                names.contains(&format!("c{c}-{i}.txt")),
                "c{c}-{i}.txt missing"
            );
        }
    }
    let status = api.raw("GET", "/v1/workspaces/1/status", None, &[]).json();
    assert_eq!(status["clean"], true, "{status}");
}

#[test]
fn python_example_client_runs_against_a_real_server() {
    let env = setup();
    let srv = Server::start(&env, &[]);
    let out = std::process::Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/serve_client.py"
        ))
        .arg(&srv.url)
        .arg(srv.token.as_deref().expect("a token by default"))
        .output()
        .expect("python3 (installed by .ci/run)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("workspaces: 1"), "{text}");
    assert!(
        text.contains("changed: modified a.txt +1 -0 hunks=1"),
        "{text}"
    );
    assert!(text.contains("artifact: hello from python"), "{text}");
    assert!(text.contains("error code: not_found"), "{text}");
}

// The guard: what the server refuses before any handler runs. Requests are written by hand
// over a socket here, so that every header (Host, Origin, Content-Type) is exactly the one a
// browser, another user or a rebound DNS name would send.

/// One HTTP/1.1 request over `stream`, `Connection: close`; the status and the body.
fn exchange(mut stream: impl Read + std::io::Write, req: &str, body: &[u8]) -> (u16, String) {
    stream.write_all(req.as_bytes()).expect("send");
    stream.write_all(body).expect("send body");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the answer");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let body = if chunked {
        let mut out = String::new();
        let mut left = rest;
        while let Some((size, after)) = left.split_once("\r\n") {
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            if n == 0 {
                break;
            }
            out.push_str(&after[..n]);
            left = &after[n + 2..];
        }
        out
    } else {
        rest.to_string()
    };
    (status, body)
}

/// `method path` to the server at `url` with exactly `headers` (plus Content-Length and
/// Connection), and `body`.
fn send(
    url: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String) {
    let addr = url.trim_start_matches("http://");
    let stream = std::net::TcpStream::connect(addr).expect("connect");
    let mut req = format!("{method} {path} HTTP/1.1\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    exchange(stream, &req, body)
}

fn code_of(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["code"].as_str().map(str::to_string))
        .unwrap_or_else(|| format!("<not a JSON error: {body}>"))
}

/// A run request whose command would create `marker`.
fn touch_body(marker: &std::path::Path) -> Vec<u8> {
    json!({"command": ["touch", marker.to_str().expect("utf-8 path")]})
        .to_string()
        .into_bytes()
}

#[test]
fn a_token_is_required_by_default_and_only_the_event_stream_takes_it_in_the_url() {
    let env = setup();
    let srv = Server::start(&env, &[]);
    let token = srv
        .token
        .clone()
        .expect("a token file by default, on loopback too");
    let host = srv.url.trim_start_matches("http://").to_string();
    let marker = env.tmp.path().join("ran");
    let bearer = srv.bearer();
    let json_ct = ("Content-Type", "application/json");

    let (status, body) = send(&srv.url, "GET", "/v1/workspaces", &[("Host", &host)], b"");
    assert_eq!((status, code_of(&body).as_str()), (401, "unauthorized"));
    let (status, body) = send(
        &srv.url,
        "POST",
        "/v1/workspaces/1/run",
        &[("Host", &host), json_ct],
        &touch_body(&marker),
    );
    assert_eq!((status, code_of(&body).as_str()), (401, "unauthorized"));
    // The right token, but in the URL of a write: refused (URLs end up in logs).
    let (status, body) = send(
        &srv.url,
        "POST",
        &format!("/v1/workspaces/1/run?token={token}"),
        &[("Host", &host), json_ct],
        &touch_body(&marker),
    );
    assert_eq!(
        (status, code_of(&body).as_str()),
        (401, "unauthorized"),
        "{body}"
    );
    // In the URL of a read other than the event stream: refused too.
    let (status, _) = send(
        &srv.url,
        "GET",
        &format!("/v1/workspaces?token={token}"),
        &[("Host", &host)],
        b"",
    );
    assert_eq!(status, 401);
    assert!(!marker.exists(), "a command ran without the token");
    // The event stream takes it in the URL (EventSource cannot set headers).
    let r = ureq::get(&format!("{}/v1/events?token={token}", srv.url))
        .call()
        .expect("events with ?token=");
    assert_eq!(r.status().as_u16(), 200);
    drop(r);
    // And the header works everywhere.
    let (status, body) = send(
        &srv.url,
        "POST",
        "/v1/workspaces/1/run",
        &[("Host", &host), json_ct, ("Authorization", &bearer)],
        &touch_body(&marker),
    );
    assert_eq!(status, 200, "{body}");
    assert!(marker.exists());
}

#[test]
fn a_foreign_host_is_refused_and_allowed_names_are_answered() {
    let env = setup();
    let srv = Server::start(&env, &["--allow-host", "rewind.lan"]);
    let port = srv.url.rsplit(':').next().unwrap().to_string();
    let bearer = srv.bearer();
    let marker = env.tmp.path().join("rebound");
    for host in [
        "evil.example.com".to_string(),
        format!("evil.example.com:{port}"),
        format!("localhost.evil.example.com:{port}"),
        "127.0.0.1:1".to_string(),
    ] {
        let (status, body) = send(
            &srv.url,
            "GET",
            "/v1/workspaces",
            &[("Host", &host), ("Authorization", &bearer)],
            b"",
        );
        assert_eq!(
            (status, code_of(&body).as_str()),
            (421, "host_not_allowed"),
            "Host: {host}: {body}"
        );
        let (status, _) = send(
            &srv.url,
            "POST",
            "/v1/workspaces/1/run",
            &[
                ("Host", &host),
                ("Authorization", &bearer),
                ("Content-Type", "application/json"),
            ],
            &touch_body(&marker),
        );
        assert_eq!(status, 421, "Host: {host}");
    }
    assert!(!marker.exists(), "a command ran for a foreign Host");
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
        "rewind.lan".to_string(),
        "rewind.lan:8443".to_string(),
    ] {
        let (status, body) = send(
            &srv.url,
            "GET",
            "/v1/workspaces",
            &[("Host", &host), ("Authorization", &bearer)],
            b"",
        );
        assert_eq!(status, 200, "Host: {host}: {body}");
    }
}

#[test]
fn requests_a_web_page_could_send_are_refused() {
    let env = setup();
    let srv = Server::start(&env, &[]);
    let host = srv.url.trim_start_matches("http://").to_string();
    let bearer = srv.bearer();
    let marker = env.tmp.path().join("simple");
    let before = crate::common::list_disk(&env.ws);
    let auth = ("Authorization", bearer.as_str());
    let h = ("Host", host.as_str());
    // Bodies a page may send anywhere without a preflight: refused even with the token.
    for ct in [
        Some("text/plain"),
        Some("text/plain;charset=UTF-8"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=x"),
        None,
    ] {
        let mut headers = vec![h, auth];
        if let Some(ct) = ct {
            headers.push(("Content-Type", ct));
        }
        let (status, body) = send(
            &srv.url,
            "POST",
            "/v1/workspaces/1/run",
            &headers,
            &touch_body(&marker),
        );
        assert_eq!(
            (status, code_of(&body).as_str()),
            (415, "unsupported_media_type"),
            "{ct:?}: {body}"
        );
        let patch = b"--- /dev/null\n+++ b/pwned.txt\n@@ -0,0 +1 @@\n+pwned\n";
        let (status, body) = send(&srv.url, "POST", "/v1/workspaces/1/apply", &headers, patch);
        assert_eq!(status, 415, "apply with {ct:?}: {body}");
    }
    // Another origin, even with the right type and the token; and a browser's write without
    // the page's header.
    let json_ct = ("Content-Type", "application/json");
    for extra in [
        vec![("Origin", "http://127.0.0.1:1")],
        vec![("Origin", "null")],
        vec![("Sec-Fetch-Site", "same-site")],
        vec![
            ("Sec-Fetch-Site", "cross-site"),
            ("Sec-Fetch-Mode", "no-cors"),
        ],
    ] {
        let mut headers = vec![h, auth, json_ct];
        headers.extend(extra.iter().copied());
        let (status, body) = send(
            &srv.url,
            "POST",
            "/v1/workspaces/1/run",
            &headers,
            &touch_body(&marker),
        );
        assert_eq!(
            (status, code_of(&body).as_str()),
            (403, "cross_origin"),
            "{extra:?}: {body}"
        );
    }
    let own = srv.url.clone();
    let (status, body) = send(
        &srv.url,
        "POST",
        "/v1/workspaces/1/run",
        &[h, auth, json_ct, ("Origin", &own)],
        &touch_body(&marker),
    );
    assert_eq!(
        (status, code_of(&body).as_str()),
        (403, "forbidden"),
        "{body}"
    );
    // The event stream from another origin, with the token in its URL.
    let token = srv.token.clone().unwrap();
    let (status, _) = send(
        &srv.url,
        "GET",
        &format!("/v1/events?token={token}"),
        &[h, ("Origin", "http://127.0.0.1:1")],
        b"",
    );
    assert_eq!(status, 403);
    assert!(!marker.exists(), "a command ran");
    assert_eq!(crate::common::list_disk(&env.ws), before, "nothing written");
    // The page's own request passes: same origin, its header, JSON.
    let (status, body) = send(
        &srv.url,
        "POST",
        "/v1/workspaces/1/run",
        &[h, auth, json_ct, ("Origin", &own), ("X-Rewind-Page", "1")],
        &touch_body(&marker),
    );
    assert_eq!(status, 200, "{body}");
    assert!(marker.exists());
}

/// The first of curl and Python that another user can run (root's pyenv shims are not).
fn client_for_other_users() -> Option<Vec<String>> {
    if std::path::Path::new("/usr/bin/curl").exists() {
        return Some(vec!["/usr/bin/curl".into()]);
    }
    std::path::Path::new("/usr/bin/python3")
        .exists()
        .then(|| vec!["/usr/bin/python3".into()])
}

#[test]
fn another_local_user_cannot_run_commands_through_the_port() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED: another uid's request: the test must run as root to become nobody");
        return;
    }
    let Some(client) = client_for_other_users() else {
        assert!(!crate::common::is_ci(), "CI installs python3");
        eprintln!("SKIPPED: another uid's request: neither /usr/bin/curl nor /usr/bin/python3");
        return;
    };
    let env = setup();
    let srv = Server::start(&env, &[]);
    let marker = env.tmp.path().join("as-nobody");
    let url = format!("{}/v1/workspaces/1/run", srv.url);
    let body = String::from_utf8(touch_body(&marker)).unwrap();
    let mut cmd = std::process::Command::new("setpriv");
    cmd.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]);
    if client[0].ends_with("curl") {
        cmd.args([
            "/usr/bin/curl",
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "-H",
            "Content-Type: application/json",
            "--data-binary",
            &body,
            &url,
        ]);
    } else {
        cmd.args([
            "/usr/bin/python3",
            "-c",
            "import sys, urllib.request, urllib.error\n\
             r = urllib.request.Request(sys.argv[1], data=sys.argv[2].encode(), method='POST', \
             headers={'Content-Type': 'application/json'})\n\
             try:\n    print(urllib.request.urlopen(r).status, end='')\n\
             except urllib.error.HTTPError as e:\n    print(e.code, end='')\n",
            &url,
            &body,
        ]);
    }
    let out = cmd.output().expect("setpriv (util-linux)");
    let status = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(status, "401", "nobody's request without the token");
    assert!(
        !marker.exists(),
        "nobody ran a command as the server's user"
    );
    // Nor can nobody read the token: the store directory and the file are the owner's.
    let read = std::process::Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
        .arg("/bin/cat")
        .arg(env.store.join("serve.token"))
        .output()
        .expect("setpriv");
    assert!(!read.status.success(), "nobody read the token");
}

#[test]
fn no_token_is_refused_over_tcp_and_works_on_a_socket() {
    let env = setup();
    let out = env
        .cmd()
        .args(["serve", "--listen", "127.0.0.1:0", "--no-token"])
        .output()
        .expect("rewind serve");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "--no-token over TCP was accepted");
    assert!(
        err.contains("--no-token is allowed only with --socket"),
        "a clear error: {err}"
    );
    // The default address too.
    let out = env.cmd().args(["serve", "--no-token"]).output().unwrap();
    assert!(!out.status.success());

    // On a socket: no token needed, and the socket is the owner's only.
    use std::os::unix::fs::PermissionsExt;
    let sock = env.tmp.path().join("rewind.sock");
    let mut child = env
        .cmd()
        .args(["--json", "serve", "--no-token", "--socket"])
        .arg(&sock)
        .stdout(Stdio::piped())
        .spawn()
        .expect("serve on a socket");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["token_file"], Value::Null, "{v}");
    let mode = std::fs::metadata(&sock).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let get = |path: &str| {
        let s = std::os::unix::net::UnixStream::connect(&sock).expect("connect");
        exchange(
            s,
            &format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"),
            b"",
        )
    };
    let (status, body) = get("/v1/workspaces");
    assert_eq!(status, 200, "{body}");
    let _ = child.kill();
    let _ = child.wait();

    // A socket without --no-token still wants the token.
    let sock2 = env.tmp.path().join("rewind2.sock");
    let mut child = env
        .cmd()
        .args(["--json", "serve", "--socket"])
        .arg(&sock2)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let s = std::os::unix::net::UnixStream::connect(&sock2).unwrap();
    let (status, _) = exchange(
        s,
        "GET /v1/workspaces HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
        b"",
    );
    assert_eq!(status, 401);
    let _ = child.kill();
    let _ = child.wait();
}

/// Starts `rewind ARGS serve` with stdout and stderr piped (neither a terminal), waits for its
/// first stdout line, stops it, and returns everything it printed.
fn output_without_a_terminal(env: &Env, args: &[&str]) -> String {
    let mut child = env
        .cmd()
        .args(args)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    // The stderr line is written right after the first stdout line.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let _ = child.kill();
    let _ = child.wait();
    let mut rest = String::new();
    let _ = out.read_to_string(&mut rest);
    let mut err = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut err);
    format!("{first}{rest}\n{err}")
}

#[test]
fn the_login_url_is_shown_only_on_a_terminal() {
    let env = setup();
    for args in [&["--json"][..], &[]] {
        let printed = output_without_a_terminal(&env, args);
        let token = std::fs::read_to_string(env.store.join("serve.token"))
            .unwrap()
            .trim()
            .to_string();
        assert!(
            !printed.contains(&token) && !printed.contains("token="),
            "the token was printed with {args:?}: {printed}"
        );
        assert!(
            printed.contains("serve.token"),
            "says where the token is: {printed}"
        );
    }
    // On a terminal (stderr on a pseudo-terminal), the sign-in link is shown there.
    let script = r#"
import os, pty, subprocess, sys, time
m, s = pty.openpty()
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=s)
os.close(s)
first = p.stdout.readline().decode()
seen = b""
deadline = time.time() + 60
while b"\n" not in seen and time.time() < deadline:
    seen += os.read(m, 4096)
p.kill()
p.wait()
sys.stdout.write("STDOUT " + first + "TTY " + seen.decode())
"#;
    let mut cmd = std::process::Command::new("python3");
    cmd.arg("-c").arg(script);
    let base = env.cmd();
    cmd.arg(base.get_program());
    cmd.args(base.get_args());
    cmd.args(["--json", "serve", "--listen", "127.0.0.1:0"]);
    let out = cmd.output().expect("python3 (installed by .ci/run)");
    let text = String::from_utf8_lossy(&out.stdout);
    let token = std::fs::read_to_string(env.store.join("serve.token"))
        .unwrap()
        .trim()
        .to_string();
    let (stdout, tty) = text.split_once("TTY ").expect("both parts");
    assert!(!stdout.contains(&token), "not in --json output: {text}");
    assert!(
        tty.contains(&format!("/login?token={token}")),
        "the terminal shows the sign-in link: {text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_op_log_names_who_ran_a_command_through_the_api() {
    let env = setup();
    let srv = Server::start(&env, &[]);
    let api = srv.api();
    let r = api.raw(
        "POST",
        "/v1/workspaces/1/run",
        Some(
            json!({"command": ["touch", "made-by-api.txt"]})
                .to_string()
                .as_bytes(),
        ),
        &[],
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert!(env.path("made-by-api.txt").exists());
    let log: Value = serde_json::from_str(&env.ok(&["--json", "op", "log"])).unwrap();
    let run = log
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "run")
        .unwrap_or_else(|| panic!("a run in {log}"));
    let command: Vec<&str> = run["command"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        command.ends_with(&["--", "touch", "made-by-api.txt"]),
        "the command: {run}"
    );
    let actor = run["actor"].as_str().unwrap_or_default();
    assert!(
        actor.contains("serve token") && actor.contains("127.0.0.1:"),
        "the actor: {run}"
    );
    // The text log shows both, and so does the API's.
    let text = env.ok(&["op", "log"]);
    assert!(
        text.contains("touch made-by-api.txt") && text.contains("by serve token"),
        "{text}"
    );
    let ops = api.raw("GET", "/v1/workspaces/1/ops", None, &[]).json();
    let row = ops
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "run")
        .unwrap();
    assert!(
        row["actor"]
            .as_str()
            .unwrap_or_default()
            .contains("serve token")
    );
    // An operation by hand names no actor.
    let snap = log
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "snapshot")
        .unwrap();
    assert_eq!(snap["actor"], Value::Null);
    // A write other than a run names its request.
    let r = api.raw("POST", "/v1/workspaces/1/snapshots", Some(b"{}"), &[]);
    assert_eq!(r.status, 201);
    let log: Value = serde_json::from_str(&env.ok(&["--json", "op", "log"])).unwrap();
    let top = &log[0];
    assert_eq!(
        top["command"],
        json!(["rewind", "serve", "POST", "/v1/workspaces/1/snapshots"]),
        "{top}"
    );
}

#[test]
fn read_only_and_no_run_refuse_their_routes() {
    let env = setup();
    env.ok(&["overlay", "create", "--name", "ro", "--backend", "copy"]);
    let marker = env.tmp.path().join("ro-ran");
    let run = touch_body(&marker);
    {
        let srv = Server::start(&env, &["--read-only"]);
        let api = srv.api();
        for (m, p, b) in [
            ("POST", "/v1/workspaces/1/run", &run[..]),
            ("POST", "/v1/overlays/ro/run", &run[..]),
            ("POST", "/v1/workspaces/1/snapshots", b"{}"),
            (
                "POST",
                "/v1/workspaces/1/apply",
                b"--- a/a.txt\n+++ b/a.txt\n",
            ),
            ("POST", "/v1/workspaces/1/undo", b"{}"),
            ("PUT", "/v1/artifacts/x", b"x"),
            ("DELETE", "/v1/overlays/ro", b""),
        ] {
            let r = api.raw(m, p, Some(b), &[]);
            assert_eq!(
                (r.status, r.code().as_str()),
                (403, "read_only"),
                "{m} {p}: {}",
                String::from_utf8_lossy(&r.body)
            );
        }
        assert_eq!(
            api.raw("GET", "/v1/workspaces/1/ops", None, &[]).status,
            200
        );
    }
    {
        let srv = Server::start(&env, &["--no-run"]);
        let api = srv.api();
        for p in ["/v1/workspaces/1/run", "/v1/overlays/ro/run"] {
            let r = api.raw("POST", p, Some(&run), &[]);
            assert_eq!(
                (r.status, r.code().as_str()),
                (403, "runs_disabled"),
                "{p}: {}",
                String::from_utf8_lossy(&r.body)
            );
        }
        let r = api.raw("POST", "/v1/workspaces/1/snapshots", Some(b"{}"), &[]);
        assert_eq!(r.status, 201, "other writes still work");
    }
    assert!(!marker.exists(), "a command ran");
}

/// `serve --log PATH`: a line per request with the peer, method and path and status, the
/// refused ones too, and never the token (which `GET /v1/events` may carry in its query).
#[test]
fn the_access_log_names_each_request_and_never_the_token() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    env.ok(&["snapshot", "-q"]);
    let log = env.tmp.path().join("access.log");
    let server = Server::start(&env, &["--log", log.to_str().unwrap()]);
    let api = server.api();
    assert_eq!(api.raw("GET", "/v1/workspaces", None, &[]).status, 200);
    let anonymous = Api::new(&server.url);
    assert_eq!(
        anonymous.raw("GET", "/v1/workspaces", None, &[]).status,
        401
    );
    let token = server.token.clone().expect("a token");
    let with_query = format!("/v1/health?token={token}");
    anonymous.raw("GET", &with_query, None, &[]);
    drop(server);
    let text = std::fs::read_to_string(&log).expect("the access log");
    assert!(text.contains("\"GET /v1/workspaces\" 200 "), "{text}");
    assert!(text.contains("\"GET /v1/workspaces\" 401 "), "{text}");
    assert!(text.contains("127.0.0.1:"), "the peer: {text}");
    assert!(text.contains("\"GET /v1/health\""), "{text}");
    assert!(
        !text.contains(&token),
        "the token leaked into the log: {text}"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&log).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

/// The page has an icon (served without the token, as its other assets are).
#[test]
fn the_review_page_has_a_favicon() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    env.ok(&["snapshot", "-q"]);
    let server = Server::start(&env, &[]);
    let anonymous = Api::new(&server.url);
    for path in ["/assets/favicon.svg", "/favicon.ico"] {
        let r = anonymous.raw("GET", path, None, &[]);
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.content_type, "image/svg+xml", "{path}");
        assert!(
            String::from_utf8_lossy(&r.body).starts_with("<svg"),
            "{path}"
        );
    }
    let page = server.api().raw("GET", "/", None, &[]);
    let html = String::from_utf8_lossy(&page.body);
    assert!(html.contains("rel=\"icon\""), "{html}");
}

/// A file that does not fit on a page with the others (the page shows 20,000 hunk lines at
/// most; here 19,400 go to the first file, 756 would go to the second) links to a page of its
/// own, which shows its hunks; a long command on the workspace page is one line with the whole
/// of it in the tooltip.
#[test]
fn a_file_too_large_for_the_page_opens_alone() {
    let env = Env::new();
    let lines = |n: usize, tag: &str| -> Vec<u8> {
        (0..n)
            .map(|i| format!("{tag} line {i}\n"))
            .collect::<String>()
            .into_bytes()
    };
    env.write("a-big.txt", &lines(9_700, "old"));
    env.write("b-later.txt", &lines(378, "old"));
    env.ok(&["snapshot", "-q"]);
    env.write("a-big.txt", &lines(9_700, "new"));
    env.write("b-later.txt", &lines(378, "new"));
    let long = format!("echo {}", "x".repeat(300));
    env.ok(&["run", "-q", "--", "sh", "-c", &long]);
    let server = Server::start(&env, &[]);
    let api = server.api();
    let ws = api.raw("GET", "/v1/workspaces", None, &[]).json()[0]["id"]
        .as_u64()
        .expect("a workspace");
    let page = api.raw("GET", &format!("/w/{ws}/diff?from=@~2&to=live"), None, &[]);
    let html = String::from_utf8_lossy(&page.body).into_owned();
    assert_eq!(page.status, 200, "{html}");
    assert!(
        html.contains("too large to show on this page"),
        "{html:.2000}"
    );
    let at = html.find("class=\"alone\" href=\"").expect("the link") + 20;
    let href = html[at..].split('"').next().unwrap().replace("&amp;", "&");
    assert!(href.contains("path=b-later.txt"), "{href}");
    let alone = api.raw("GET", &href, None, &[]);
    let one = String::from_utf8_lossy(&alone.body);
    assert_eq!(alone.status, 200, "{one:.2000}");
    assert!(!one.contains("too large"), "{one:.2000}");
    assert!(one.contains("new line 377"), "the hunks are shown");
    assert!(!one.contains("a-big.txt"), "only that file");

    let home = api.raw("GET", &format!("/w/{ws}"), None, &[]);
    let html = String::from_utf8_lossy(&home.body);
    for class in [
        "class=\"muted mono cmd\" title=\"",
        "class=\"cmd\" title=\"rewind run",
    ] {
        let at = html
            .find(class)
            .unwrap_or_else(|| panic!("{class}: {html:.3000}"));
        let title = html[at + class.len()..].split('"').next().unwrap();
        assert!(
            title.contains(&"x".repeat(300)),
            "the whole command: {title}"
        );
    }
}

/// schemas/run-result.schema.json is what schemars generates from `rewind::wire::RunResult`
/// (the type the CLI, the HTTP API and the MCP server print runs with): change the type and
/// this fails until the file is regenerated (`REWIND_BLESS=1 cargo test -p rewind-cli --test
/// cli -- openapi_wire`, which regenerates openapi.json's components too).
#[test]
fn openapi_wire_run_result_schema_is_generated_from_the_type() {
    let mut schema = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<rewind::wire::RunResult>();
    schema.insert("$id".into(), "urn:rewind:schema:run-result:1".into());
    schema.insert("title".into(), "rewind run result".into());
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../schemas/run-result.schema.json"
    );
    let mut text = serde_json::to_string_pretty(&schema).unwrap();
    text.push('\n');
    if std::env::var_os("REWIND_BLESS").is_some() {
        std::fs::write(path, text).unwrap();
        return;
    }
    let shipped = std::fs::read_to_string(path).unwrap();
    assert!(
        shipped == text,
        "schemas/run-result.schema.json differs from rewind::wire::RunResult: regenerate with REWIND_BLESS=1"
    );
}

/// The components of serve/openapi.json that describe wire types (`rewind::wire`) are what
/// schemars generates from those types: change a type and this fails until the document is
/// regenerated (`REWIND_BLESS=1 cargo test -p rewind-cli --test cli -- openapi_wire`, then
/// `python3 clients/python/tools/gen_models.py`).
#[test]
fn openapi_wire_components_are_generated_from_the_types() {
    use schemars::generate::SchemaSettings;
    let mut g = SchemaSettings::draft2020_12()
        .with(|s| {
            s.definitions_path = "/components/schemas".into();
            s.meta_schema = None;
        })
        .for_serialize()
        .into_generator();
    g.subschema_for::<rewind::wire::Snapshot>();
    g.subschema_for::<rewind::wire::Session>();
    g.subschema_for::<rewind::wire::RangeRuns>();
    g.subschema_for::<rewind::wire::OverlayRuns>();
    g.subschema_for::<rewind::wire::Revert>();
    g.subschema_for::<rewind::wire::Changes>();
    g.subschema_for::<rewind::wire::Status>();
    g.subschema_for::<rewind::wire::OverlayDiff>();
    g.subschema_for::<rewind::wire::Restore>();
    g.subschema_for::<rewind::wire::Undo>();
    g.subschema_for::<rewind::wire::Overlay>();
    g.subschema_for::<rewind::wire::OverlayCreated>();
    g.subschema_for::<rewind::wire::OverlayAccept>();
    g.subschema_for::<rewind::wire::OverlayReject>();
    g.subschema_for::<rewind::wire::Op>();
    g.subschema_for::<rewind::wire::Artifact>();
    g.subschema_for::<rewind::wire::ArtifactStored>();
    g.subschema_for::<rewind::wire::Workspace>();
    g.subschema_for::<rewind::wire::LogEntry>();
    g.subschema_for::<rewind::wire::SnapshotShown>();
    g.subschema_for::<rewind::wire::RunResult>();
    g.subschema_for::<rewind::wire::RunStarted>();
    g.subschema_for::<rewind::wire::RunState>();
    g.subschema_for::<rewind::wire::Applied>();
    g.subschema_for::<rewind::wire::SnapshotTaken>();
    g.subschema_for::<rewind::wire::Tree>();
    g.subschema_for::<rewind::wire::OverlaySplit>();
    g.subschema_for::<rewind::wire::OverlaySnapshot>();
    g.subschema_for::<rewind::wire::OverlayDropped>();
    g.subschema_for::<rewind::wire::ArtifactRemoved>();
    g.subschema_for::<rewind::wire::ServerEvent>();
    g.subschema_for::<rewind::wire::WorkspaceRegistered>();
    g.subschema_for::<rewind::wire::Health>();
    g.subschema_for::<rewind::wire::ErrorBody>();
    let generated = g.take_definitions(true);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../serve/openapi.json");
    let mut doc = openapi();
    let components = doc["components"]["schemas"]
        .as_object_mut()
        .expect("components");
    if std::env::var_os("REWIND_BLESS").is_some() {
        for (name, schema) in &generated {
            components.insert(name.clone(), schema.clone());
        }
        // serde_json's maps are sorted: the document keeps its keys in that order, so a
        // regeneration changes only what changed.
        let mut out = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
        serde::Serialize::serialize(
            &doc,
            &mut serde_json::Serializer::with_formatter(&mut out, fmt),
        )
        .unwrap();
        out.push(b'\n');
        std::fs::write(path, out).unwrap();
        return;
    }
    let stale: Vec<&String> = generated
        .iter()
        .filter(|(name, schema)| components.get(*name) != Some(*schema))
        .map(|(name, _)| name)
        .collect();
    assert!(
        stale.is_empty(),
        "openapi.json's {stale:?} differ from the wire types: regenerate with REWIND_BLESS=1"
    );
}
