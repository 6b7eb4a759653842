//! The HTTP API beyond serve.rs's route walk: workspaces created over HTTP, run options, hunks
//! in run results, structured conflicts, hunk splitting, overlay snapshots, events that are
//! never lost silently; and the bugs found on the way (pending counts, `artifact get -o -`,
//! openapi.json's schema reference). The server is the real binary, started with the token.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::Env;

/// A `rewind serve --require-token` child on a free loopback port, with the token it wrote.
struct Server {
    child: Child,
    url: String,
    token: String,
    agent: ureq::Agent,
}

impl Server {
    fn start(env: &Env) -> Server {
        let mut child = env
            .cmd()
            .args([
                "--json",
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--require-token",
            ])
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
        let token = std::fs::read_to_string(env.store.join("serve.token"))
            .expect("serve.token")
            .trim()
            .to_string();
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        Server {
            child,
            url,
            token,
            agent,
        }
    }

    /// `method path` with a JSON body (or none): (status, JSON body).
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let url = format!("{}{path}", self.url);
        let auth = format!("Bearer {}", self.token);
        let r = match (method, body) {
            ("GET", _) => self.agent.get(&url).header("Authorization", &auth).call(),
            ("DELETE", _) => self
                .agent
                .delete(&url)
                .header("Authorization", &auth)
                .call(),
            ("POST", b) => self
                .agent
                .post(&url)
                .header("Authorization", &auth)
                .header("Content-Type", "application/json")
                .send(b.unwrap_or(json!({})).to_string()),
            (m, _) => panic!("method {m}"),
        };
        let mut r = r.expect("request");
        let status = r.status().as_u16();
        let mut text = String::new();
        r.body_mut()
            .as_reader()
            .read_to_string(&mut text)
            .expect("body");
        let v = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        (status, v)
    }

    fn get(&self, path: &str) -> Value {
        let (s, v) = self.call("GET", path, None);
        assert_eq!(s, 200, "GET {path}: {v}");
        v
    }

    fn post(&self, path: &str, body: Value) -> Value {
        let (s, v) = self.call("POST", path, Some(body.clone()));
        assert!((200..300).contains(&s), "POST {path} {body}: {s} {v}");
        v
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn openapi() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../serve/openapi.json"
    ))
    .expect("serve/openapi.json");
    serde_json::from_str(&text).expect("openapi.json parses")
}

/// A workspace with one snapshot and `target/` ignored.
fn setup() -> Env {
    let env = Env::new();
    env.write(
        "a.txt",
        b"one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n",
    );
    env.write(".gitignore", b"target/\n");
    env.ok(&["init"]);
    env.ok(&["snapshot", "-m", "base"]);
    env
}

fn ws_id(srv: &Server) -> u64 {
    srv.get("/v1/workspaces")[0]["id"]
        .as_u64()
        .expect("a workspace")
}

#[test]
fn artifact_get_dash_writes_standard_output() {
    let env = Env::new();
    let src = env.tmp.path().join("in.bin");
    std::fs::write(&src, b"artifact bytes\n").unwrap();
    env.ok(&["artifact", "put", "k", src.to_str().unwrap()]);
    let out = env
        .cmd()
        .current_dir(&env.ws)
        .args(["artifact", "get", "k", "-o", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout, b"artifact bytes\n");
    assert!(
        !env.ws.join("-").exists(),
        "`-o -` wrote a file named `-` instead of standard output"
    );
}

#[test]
fn openapi_names_schema_files_that_exist() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../serve/openapi.json"
    ))
    .unwrap();
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let named: Vec<&str> = text
        .match_indices("schemas/")
        .map(|(i, _)| {
            let rest = &text[i..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || "/._-".contains(c)))
                .unwrap_or(rest.len());
            rest[..end].trim_end_matches('.')
        })
        .filter(|s| s.ends_with(".json"))
        .collect();
    assert!(!named.is_empty(), "RunResult names its schema file");
    for f in named {
        assert!(
            root.join(f).is_file(),
            "openapi.json names {f}, which does not exist"
        );
    }
}

/// Overlays' `pending` counts what `overlay diff` lists: not ignored outputs (listed apart)
/// and not paths taken out by a reject.
#[test]
fn pending_counts_only_the_reviewable_changes() {
    let env = setup();
    for backend in ["copy", "auto"] {
        let id = env.ok(&["overlay", "create", "--backend", backend]);
        let id = id.trim();
        env.ok(&[
            "overlay",
            "run",
            id,
            "--",
            "sh",
            "-c",
            "echo x >> a.txt; echo new > n.txt; mkdir -p target; echo o > target/out; echo p > target/out2",
        ]);
        let pending = |env: &Env| -> u64 {
            let list: Value =
                serde_json::from_str(&env.ok(&["--json", "overlay", "list"])).unwrap();
            let row = list
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["id"].to_string() == id)
                .cloned()
                .unwrap();
            row["pending"].as_u64().unwrap()
        };
        let diff: Value =
            serde_json::from_str(&env.ok(&["--json", "overlay", "diff", id])).unwrap();
        let listed = diff["files"].as_array().map_or(0, Vec::len) as u64;
        assert_eq!(listed, 2, "{backend}: {diff}");
        assert_eq!(
            pending(&env),
            2,
            "{backend}: ignored outputs are not pending"
        );
        let srv = Server::start(&env);
        let api = |srv: &Server| {
            srv.get("/v1/overlays")
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["id"].to_string() == id)
                .unwrap()["pending"]
                .as_u64()
                .unwrap()
        };
        assert_eq!(api(&srv), 2, "{backend}: GET /v1/overlays");
        env.ok(&["overlay", "reject", id]);
        let diff: Value =
            serde_json::from_str(&env.ok(&["--json", "overlay", "diff", id])).unwrap();
        assert_eq!(diff["files"].as_array().map_or(0, Vec::len), 0);
        assert_eq!(
            pending(&env),
            0,
            "{backend}: rejected paths are not pending"
        );
        assert_eq!(api(&srv), 0, "{backend}: GET /v1/overlays after reject");
        env.ok(&["overlay", "drop", id]);
    }
}
