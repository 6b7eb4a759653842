//! Signing a browser in when the server requires its token.
//!
//! A browser cannot put `Authorization: Bearer` on a page navigation, so the page works on a
//! cookie: `/login?token=T` (the URL `rewind serve` prints on a terminal) or the form at
//! `/login` checks T
//! in constant time and sets `rewind_token=T` (HttpOnly, SameSite=Strict), which the server's
//! guard accepts like the header. The page's script adds `X-Rewind-Page: 1` to its writes,
//! which the guard demands of cookie-authenticated writes: a cross-site form cannot send
//! it. Without a token required, `/login` just leads to `/`.

use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::{html, layout};
use crate::AppState;

/// The cookie the guard reads.
const COOKIE: &str = "rewind_token";

/// `/login`'s query.
#[derive(Deserialize)]
pub(super) struct LoginQuery {
    token: Option<String>,
}

/// `GET /login`: with `?token=`, signs in; without, the form.
pub(super) async fn form(State(state): State<AppState>, Query(q): Query<LoginQuery>) -> Response {
    match q.token {
        Some(t) => sign_in(&state, &t),
        None if !state.token_required() => Redirect::to("/").into_response(),
        None => form_page(StatusCode::OK, None),
    }
}

/// `POST /login` with the form's `token` field (urlencoded).
pub(super) async fn submit(State(state): State<AppState>, body: String) -> Response {
    let token = body
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == "token")
        .map(|(_, v)| form_decode(v))
        .unwrap_or_default();
    sign_in(&state, token.trim())
}

fn sign_in(state: &AppState, token: &str) -> Response {
    if !state.token_required() {
        return Redirect::to("/").into_response();
    }
    if !state.token_matches(token.as_bytes()) {
        return form_page(
            StatusCode::UNAUTHORIZED,
            Some("That is not this server's token."),
        );
    }
    // A token a cookie cannot carry (it came from a hand-written serve.token) is refused
    // rather than written into a header.
    if !token
        .bytes()
        .all(|b| b.is_ascii_graphic() && !b";,\"\\".contains(&b))
    {
        return form_page(
            StatusCode::BAD_REQUEST,
            Some("This token has characters a cookie cannot carry: use Authorization: Bearer."),
        );
    }
    (
        [(
            header::SET_COOKIE,
            format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"),
        )],
        Redirect::to("/"),
    )
        .into_response()
}

fn form_page(status: StatusCode, error: Option<&str>) -> Response {
    let error = error
        .map(|e| {
            format!(
                "<pre class=\"errorbox\" id=\"login-error\">{}</pre>",
                html::escape(e)
            )
        })
        .unwrap_or_default();
    let body = format!(
        "<h1>Sign in</h1>{error}<p>This server requires its token: the line <code>review page: \
         …/login?token=…</code> that <code>rewind serve</code> printed on its terminal signs you \
         in, or paste the token from <code>serve.token</code> in the store directory.</p>\
         <form method=\"post\" action=\"/login\" class=\"compare\"><input type=\"password\" \
         name=\"token\" autocomplete=\"current-password\" size=\"70\" autofocus> \
         <button type=\"submit\" class=\"primary\">Sign in</button></form>"
    );
    (status, Html(layout("sign in", &[], &body))).into_response()
}

/// An `application/x-www-form-urlencoded` value: `+` is a space, `%XX` a byte.
fn form_decode(v: &str) -> String {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = |c: u8| (c as char).to_digit(16);
                match (hex(b[i + 1]), hex(b[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::form_decode;

    #[test]
    fn form_values_decode() {
        assert_eq!(form_decode("ab%2Bc+d%zz%4"), "ab+c d%zz%4");
        assert_eq!(form_decode("%41"), "A");
        assert_eq!(form_decode("%é"), "%é");
    }
}
