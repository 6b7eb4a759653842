//! Encrypted remotes: what the bucket holds is sealed, and its names say nothing.
//!
//! As restic does, a random master key encrypts everything and is itself stored only wrapped
//! by a key derived from a password (argon2id) or a key file, in `keys/<id>` objects: a new
//! password is a new key object around the same master key, so changing it re-uploads no data.
//!
//! - Every object but the marker, the key objects and the packs is sealed whole with the
//!   remote's [`Suite`] (`nonce || ciphertext || tag`, 24 bytes of nonce and 16 of tag in both),
//!   with its logical name as associated data: an object copied over another one does not open.
//! - A pack is the concatenation of its entries, each sealed alone (so a ranged read still
//!   fetches one object), with the entry's kind, id, encoding and size as associated data.
//! - Remotes made today seal with AES-256-GCM ([`Suite::Aes256Gcm`]): AWS-LC's implementation
//!   (already in the build for object_store's TLS) runs at ~10 GB/s on a core with AES
//!   instructions, against ~1 GB/s for XChaCha20-Poly1305 in portable Rust, so sealing costs a
//!   push a few percent rather than ~5%. GCM's 12-byte nonces are too short to draw at random
//!   for the billions of objects a shared key may seal, so each writer (each [`Crypt`]) draws a
//!   random 16-byte salt, seals under the subkey BLAKE3-keyed from the data key and that salt,
//!   and counts its nonces: the 24 bytes stored are `salt || counter`. A (subkey, nonce) pair
//!   never repeats while salts do not collide (2^-64 after 2^32 writers). Remotes made before
//!   keep XChaCha20-Poly1305 under random nonces ([`Suite::XChaCha20`]), read and written as
//!   they were; the marker names the suite.
//! - Every name below a directory (`snapshots/<id>`, `refs/<tag>`, `index/<pack>`...) is
//!   encrypted deterministically (an SIV construction: the nonce is a BLAKE3 keyed hash of the
//!   directory and name under the naming key), so the same object gets the same name on every
//!   machine that shares the key, listings still decode to the logical names, and the server
//!   sees neither ids nor tag, artifact or workspace names.
//!
//! Key material is wiped when dropped: the master key and the naming IV in [`Crypt`], the
//! keys derived from them and from a secret on their way, and the password or key file in a
//! [`Secret`] (the ciphers wipe their own copies of the key, as RustCrypto's do).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, Nonce, UnboundKey};
use chacha20poly1305::aead::rand_core::RngCore;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use serde::{Deserialize, Serialize};
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use crate::error::{Error, Result};

/// Bytes a sealed object or entry adds to its plaintext: the nonce and the tag.
pub const OVERHEAD: usize = NONCE + 16;
const NONCE: usize = 24;
/// The master key: 32 bytes for sealing, 32 for naming.
const MASTER: usize = 64;
/// The directory of key objects (names and contents in the clear: they are what opens the rest).
pub const KEYS_DIR: &str = "keys";
/// The key object format.
const KEY_FORMAT: u32 = 1;

/// What unlocks an encrypted remote.
pub enum Secret {
    /// A password, stretched with argon2id.
    Password(String),
    /// The contents of a key file: used as they are (they should be random), hashed with the
    /// key object's salt.
    KeyFile(Vec<u8>),
}

impl Drop for Secret {
    fn drop(&mut self) {
        match self {
            Secret::Password(pw) => pw.zeroize(),
            Secret::KeyFile(bytes) => bytes.zeroize(),
        }
    }
}

impl ZeroizeOnDrop for Secret {}

impl Secret {
    fn kdf(&self) -> &'static str {
        match self {
            Secret::Password(_) => "argon2id",
            Secret::KeyFile(_) => "key-file",
        }
    }
}

/// argon2id's cost for a new key object: 64 MiB, 3 passes (about a quarter of a second on one
/// core), above the OWASP minimum (19 MiB, 2 passes). Stored with each key object, so it can
/// change without breaking older ones.
pub const ARGON2_M_KIB: u32 = 64 * 1024;
/// argon2id's passes for a new key object.
pub const ARGON2_T: u32 = 3;

/// A key object, `keys/<id>`: the master key wrapped under a key derived from a secret.
#[derive(Serialize, Deserialize)]
struct KeyObject {
    format: u32,
    /// "argon2id" or "key-file".
    kdf: String,
    #[serde(default)]
    m_cost: u32,
    #[serde(default)]
    t_cost: u32,
    #[serde(default)]
    p_cost: u32,
    /// Hex.
    salt: String,
    /// Hex: nonce || the master key sealed || tag, with the key's id as associated data.
    sealed: String,
}

/// How a remote seals its objects and pack entries (names and key objects are sealed the same
/// way under both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suite {
    /// XChaCha20-Poly1305 under a random 24-byte nonce per object: remotes made before
    /// AES-256-GCM.
    XChaCha20,
    /// AES-256-GCM under a per-writer subkey and counted nonces (see the module's doc).
    Aes256Gcm,
}

impl Suite {
    /// The suite of new remotes.
    pub const NEW: Suite = Suite::Aes256Gcm;

    /// Its name in the remote's marker.
    pub fn name(self) -> &'static str {
        match self {
            Suite::XChaCha20 => "xchacha20poly1305",
            Suite::Aes256Gcm => "aes256gcm-blake3-subkeys",
        }
    }

    /// The suite a marker names; None for a name this build does not know.
    pub fn from_name(name: &str) -> Option<Suite> {
        [Suite::XChaCha20, Suite::Aes256Gcm]
            .into_iter()
            .find(|s| s.name() == name)
    }
}

/// The keys of an unlocked remote.
pub struct Crypt {
    suite: Suite,
    data: XChaCha20Poly1305,
    /// The key AES-256-GCM subkeys are derived from.
    data_key: [u8; 32],
    /// This writer's salt, subkey and next nonce (AES-256-GCM). AWS-LC wipes a key's memory
    /// when it is freed (`OPENSSL_free` cleanses), so the subkeys need no wiping here.
    salt: [u8; SALT],
    sealer: LessSafeKey,
    counter: AtomicU64,
    /// Subkeys of the salts opened lately: the entries of one pack share one.
    openers: Mutex<Vec<([u8; SALT], std::sync::Arc<LessSafeKey>)>>,
    names: XChaCha20Poly1305,
    name_iv: [u8; 32],
    master: [u8; MASTER],
    /// The key object that opened it.
    key_id: String,
}

/// Bytes of an AES-256-GCM writer's salt (the rest of the 24-byte nonce field is its counter).
const SALT: usize = 16;
/// Subkeys kept for opening.
const OPENERS: usize = 16;

impl Drop for Crypt {
    fn drop(&mut self) {
        self.master.zeroize();
        self.name_iv.zeroize();
        self.data_key.zeroize();
    }
}

// The ciphers wipe their keys themselves.
impl ZeroizeOnDrop for Crypt {}

impl std::fmt::Debug for Crypt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Crypt")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

fn random<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    OsRng.fill_bytes(&mut b);
    b
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Lowercase or uppercase hex to bytes; None for an odd length or a non-hex digit.
pub(super) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Why a sealed object did not open (the caller names the object).
#[derive(Debug)]
pub struct Refused;

impl Crypt {
    fn from_master(master: &[u8; MASTER], key_id: String, suite: Suite) -> Result<Crypt> {
        let data = Zeroizing::new(blake3::derive_key("rewind remote 2026 data", &master[..32]));
        let names = Zeroizing::new(blake3::derive_key(
            "rewind remote 2026 names",
            &master[32..],
        ));
        let salt = random::<SALT>();
        // A 32-byte key is always a valid AES-256 key; AWS-LC refusing one is its own failure.
        let sealer = subkey(&data, &salt)
            .map_err(|_| Error::Internal("AWS-LC refused an AES-256-GCM key".into()))?;
        Ok(Crypt {
            suite,
            data: XChaCha20Poly1305::new((&*data).into()),
            sealer,
            data_key: *data,
            salt,
            counter: AtomicU64::new(0),
            openers: Mutex::new(Vec::new()),
            names: XChaCha20Poly1305::new((&*names).into()),
            name_iv: blake3::derive_key("rewind remote 2026 name nonces", &master[32..]),
            master: *master,
            key_id,
        })
    }

    /// A new random master key sealing with `suite`, and the key object that wraps it under
    /// `secret` (its id and bytes, to be written to `keys/<id>`).
    pub fn create(secret: &Secret, suite: Suite) -> Result<(Crypt, String, Vec<u8>)> {
        let id = hex(&random::<16>());
        let crypt = Crypt::from_master(&Zeroizing::new(random::<MASTER>()), id.clone(), suite)?;
        let bytes = crypt.wrap(&id, secret)?;
        Ok((crypt, id, bytes))
    }

    /// The key object this crypt was opened with.
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// A key object `id` wrapping this master key under `secret`.
    pub fn wrap(&self, id: &str, secret: &Secret) -> Result<Vec<u8>> {
        let salt = random::<16>();
        let obj = KeyObject {
            format: KEY_FORMAT,
            kdf: secret.kdf().into(),
            m_cost: ARGON2_M_KIB,
            t_cost: ARGON2_T,
            p_cost: 1,
            salt: hex(&salt),
            sealed: String::new(),
        };
        let wrapping = derive(secret, &obj, &salt)?;
        let sealed = seal_with(&wrapping, &key_ad(id), &self.master[..])?;
        let obj = KeyObject {
            sealed: hex(&sealed),
            ..obj
        };
        serde_json::to_vec_pretty(&obj).map_err(|e| Error::Encode {
            what: "remote key",
            why: e.to_string(),
        })
    }

    /// Opens the key object `id` with `secret`, for a remote sealing with `suite`: None when it
    /// is not for this secret (another password, or a key file's object tried with a password).
    pub fn unwrap(id: &str, bytes: &[u8], secret: &Secret, suite: Suite) -> Result<Option<Crypt>> {
        let Ok(obj) = serde_json::from_slice::<KeyObject>(bytes) else {
            return Ok(None);
        };
        if obj.format != KEY_FORMAT || obj.kdf != secret.kdf() {
            return Ok(None);
        }
        let (Some(salt), Some(sealed)) = (unhex(&obj.salt), unhex(&obj.sealed)) else {
            return Ok(None);
        };
        let wrapping = derive(secret, &obj, &salt)?;
        let Ok(master) = open_with(&wrapping, &key_ad(id), &sealed) else {
            return Ok(None);
        };
        let master = Zeroizing::new(master);
        let Ok(master) = <&[u8; MASTER]>::try_from(master.as_slice()) else {
            return Ok(None);
        };
        Crypt::from_master(master, id.to_string(), suite).map(Some)
    }

    /// The suite this remote seals with.
    pub fn suite(&self) -> Suite {
        self.suite
    }

    /// Seals an object stored under `key`.
    pub fn seal_object(&self, key: &str, plain: &[u8]) -> Result<Vec<u8>> {
        self.seal_data(&object_ad(key), plain)
    }

    /// Opens an object read from `key`.
    pub fn open_object(&self, key: &str, sealed: &[u8]) -> std::result::Result<Vec<u8>, Refused> {
        self.open_data(&object_ad(key), sealed)
    }

    /// Seals a pack entry; `what` is its kind, id, encoding and size (see `pack`).
    pub fn seal_entry(&self, what: &[u8], stored: &[u8]) -> Result<Vec<u8>> {
        self.seal_data(&entry_ad(what), stored)
    }

    /// Opens a pack entry.
    pub fn open_entry(&self, what: &[u8], sealed: &[u8]) -> std::result::Result<Vec<u8>, Refused> {
        self.open_data(&entry_ad(what), sealed)
    }

    fn seal_data(&self, ad: &[u8], plain: &[u8]) -> Result<Vec<u8>> {
        if self.suite == Suite::XChaCha20 {
            return seal(&self.data, ad, plain);
        }
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let mut out = Vec::with_capacity(plain.len() + OVERHEAD);
        out.extend_from_slice(&self.salt);
        out.extend_from_slice(&n.to_be_bytes());
        out.extend_from_slice(plain);
        let tag = self
            .sealer
            .seal_in_place_separate_tag(
                gcm_nonce(n.to_be_bytes()),
                Aad::from(ad),
                &mut out[NONCE..],
            )
            .map_err(|_| too_long(plain.len()))?;
        out.extend_from_slice(tag.as_ref());
        Ok(out)
    }

    fn open_data(&self, ad: &[u8], sealed: &[u8]) -> std::result::Result<Vec<u8>, Refused> {
        if self.suite == Suite::XChaCha20 {
            return open(&self.data, ad, sealed);
        }
        if sealed.len() < OVERHEAD {
            return Err(Refused);
        }
        let (nonce, rest) = sealed.split_at(NONCE);
        let (salt, counter) = nonce.split_at(SALT);
        let (Ok(salt), Ok(counter)) = (<[u8; SALT]>::try_from(salt), <[u8; 8]>::try_from(counter))
        else {
            return Err(Refused);
        };
        let mut buf = rest.to_vec();
        let n = self
            .opener(&salt)
            .ok_or(Refused)?
            .open_in_place(gcm_nonce(counter), Aad::from(ad), &mut buf)
            .map_err(|_| Refused)?
            .len();
        buf.truncate(n);
        Ok(buf)
    }

    /// The subkey of `salt`, derived once for the entries that share it.
    fn opener(&self, salt: &[u8; SALT]) -> Option<std::sync::Arc<LessSafeKey>> {
        let mut cache = self.openers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, k)) = cache.iter().find(|(s, _)| s == salt) {
            return Some(k.clone());
        }
        let k = std::sync::Arc::new(subkey(&self.data_key, salt).ok()?);
        if cache.len() == OPENERS {
            cache.remove(0);
        }
        cache.push((*salt, k.clone()));
        Some(k)
    }

    /// The stored name of `name` in directory `dir`: deterministic, so equal on every machine
    /// with this key, and reversible only with it. A name of even-length lowercase hex (an id)
    /// is encrypted as its bytes, which keeps names short.
    pub fn encode_name(&self, dir: &str, name: &str) -> String {
        let mut plain = Vec::with_capacity(name.len() / 2 + 1);
        match unhex(name).filter(|_| !name.bytes().any(|b| b.is_ascii_uppercase())) {
            Some(bytes) => {
                plain.push(1);
                plain.extend_from_slice(&bytes);
            }
            None => {
                plain.push(0);
                plain.extend_from_slice(name.as_bytes());
            }
        }
        let iv = self.name_nonce(dir, &plain);
        let ad = name_ad(dir);
        let ct = self
            .names
            .encrypt(
                XNonce::from_slice(&iv),
                Payload {
                    msg: &plain,
                    aad: &ad,
                },
            )
            .unwrap_or_default();
        let mut out = iv.to_vec();
        out.extend_from_slice(&ct);
        hex(&out)
    }

    /// The name a stored name in `dir` stands for; None when it is no name encrypted with this
    /// key in this directory (an object of another key, or a foreign one).
    pub fn decode_name(&self, dir: &str, stored: &str) -> Option<String> {
        let bytes = unhex(stored)?;
        if bytes.len() < OVERHEAD + 1 {
            return None;
        }
        let (iv, ct) = bytes.split_at(NONCE);
        let ad = name_ad(dir);
        let plain = self
            .names
            .decrypt(XNonce::from_slice(iv), Payload { msg: ct, aad: &ad })
            .ok()?;
        if self.name_nonce(dir, &plain) != iv {
            return None;
        }
        match plain.split_first()? {
            (1, id) => Some(hex(id)),
            (0, text) => String::from_utf8(text.to_vec()).ok(),
            _ => None,
        }
    }

    fn name_nonce(&self, dir: &str, plain: &[u8]) -> [u8; NONCE] {
        let mut h = blake3::Hasher::new_keyed(&self.name_iv);
        h.update(dir.as_bytes()).update(b"\0").update(plain);
        let mut iv = [0u8; NONCE];
        h.finalize_xof().fill(&mut iv);
        iv
    }
}

fn object_ad(key: &str) -> Vec<u8> {
    [b"rewind object\0".as_slice(), key.as_bytes()].concat()
}

fn entry_ad(what: &[u8]) -> Vec<u8> {
    [b"rewind entry\0".as_slice(), what].concat()
}

fn name_ad(dir: &str) -> Vec<u8> {
    [b"rewind name\0".as_slice(), dir.as_bytes()].concat()
}

fn key_ad(id: &str) -> Vec<u8> {
    [b"rewind key\0".as_slice(), id.as_bytes()].concat()
}

/// The key that wraps the master key in `obj`.
fn derive(secret: &Secret, obj: &KeyObject, salt: &[u8]) -> Result<Zeroizing<[u8; 32]>> {
    match secret {
        Secret::Password(pw) => {
            let params = argon2::Params::new(obj.m_cost, obj.t_cost, obj.p_cost, Some(32))
                .map_err(|e| Error::KeyDerivation(format!("argon2 parameters: {e}")))?;
            let a =
                argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params);
            let mut out = Zeroizing::new([0u8; 32]);
            a.hash_password_into(pw.as_bytes(), salt, &mut *out)
                .map_err(|e| Error::KeyDerivation(format!("argon2: {e}")))?;
            Ok(out)
        }
        Secret::KeyFile(bytes) => {
            let mut h = blake3::Hasher::new_derive_key("rewind remote 2026 key file");
            h.update(salt).update(bytes);
            Ok(Zeroizing::new(*h.finalize().as_bytes()))
        }
    }
}

/// The AES-256-GCM key of a writer's `salt`.
fn subkey(
    data_key: &[u8; 32],
    salt: &[u8; SALT],
) -> std::result::Result<LessSafeKey, aws_lc_rs::error::Unspecified> {
    let mut h = blake3::Hasher::new_keyed(data_key);
    h.update(b"rewind remote aes-256-gcm subkey\0").update(salt);
    let k = Zeroizing::new(*h.finalize().as_bytes());
    UnboundKey::new(&AES_256_GCM, &*k).map(LessSafeKey::new)
}

/// GCM's 12-byte nonce for a writer's counter (the salt is in the subkey).
fn gcm_nonce(counter: [u8; 8]) -> Nonce {
    let mut n = [0u8; 12];
    n[4..].copy_from_slice(&counter);
    Nonce::assume_unique_for_key(n)
}

/// The ciphers refuse only inputs of tens of GiB; no object is that large.
fn too_long(len: usize) -> Error {
    Error::Encode {
        what: "sealed remote object",
        why: format!("{len} bytes is more than the cipher seals at once"),
    }
}

fn seal(cipher: &XChaCha20Poly1305, ad: &[u8], plain: &[u8]) -> Result<Vec<u8>> {
    let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
    let mut out = Vec::with_capacity(plain.len() + OVERHEAD);
    out.extend_from_slice(&nonce);
    let ct = cipher
        .encrypt(
            &nonce,
            Payload {
                msg: plain,
                aad: ad,
            },
        )
        .map_err(|_| too_long(plain.len()))?;
    out.extend_from_slice(&ct);
    Ok(out)
}

fn open(
    cipher: &XChaCha20Poly1305,
    ad: &[u8],
    sealed: &[u8],
) -> std::result::Result<Vec<u8>, Refused> {
    if sealed.len() < OVERHEAD {
        return Err(Refused);
    }
    let (nonce, ct) = sealed.split_at(NONCE);
    cipher
        .decrypt(XNonce::from_slice(nonce), Payload { msg: ct, aad: ad })
        .map_err(|_| Refused)
}

fn seal_with(key: &[u8; 32], ad: &[u8], plain: &[u8]) -> Result<Vec<u8>> {
    seal(&XChaCha20Poly1305::new(key.into()), ad, plain)
}

fn open_with(key: &[u8; 32], ad: &[u8], sealed: &[u8]) -> std::result::Result<Vec<u8>, Refused> {
    open(&XChaCha20Poly1305::new(key.into()), ad, sealed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_open_only_under_their_name_and_key() {
        for suite in [Suite::XChaCha20, Suite::Aes256Gcm] {
            let (c, id, key) = Crypt::create(&Secret::KeyFile(b"k".repeat(32)), suite).unwrap();
            let sealed = c.seal_object("snapshots/ab", b"record").unwrap();
            assert_eq!(c.open_object("snapshots/ab", &sealed).unwrap(), b"record");
            assert!(c.open_object("snapshots/cd", &sealed).is_err(), "swapped");
            assert!(
                c.open_object("snapshots/ab", &sealed[..sealed.len() - 1])
                    .is_err()
            );
            for at in [3, 20, 30, sealed.len() - 1] {
                let mut flipped = sealed.clone();
                flipped[at] ^= 1;
                assert!(c.open_object("snapshots/ab", &flipped).is_err(), "{at}");
            }
            assert!(
                Crypt::unwrap(&id, &key, &Secret::KeyFile(b"x".repeat(32)), suite)
                    .unwrap()
                    .is_none()
            );
            // Another writer with the same key (another machine) opens it, and the other way.
            let again = Crypt::unwrap(&id, &key, &Secret::KeyFile(b"k".repeat(32)), suite)
                .unwrap()
                .unwrap();
            assert_eq!(
                again.open_object("snapshots/ab", &sealed).unwrap(),
                b"record"
            );
            let back = again.seal_entry(b"what", b"entry").unwrap();
            assert_eq!(c.open_entry(b"what", &back).unwrap(), b"entry");
            assert!(c.open_entry(b"else", &back).is_err());
            // The suites do not open each other's objects.
            let other = if suite == Suite::XChaCha20 {
                Suite::Aes256Gcm
            } else {
                Suite::XChaCha20
            };
            let cross = Crypt::unwrap(&id, &key, &Secret::KeyFile(b"k".repeat(32)), other)
                .unwrap()
                .unwrap();
            assert!(cross.open_object("snapshots/ab", &sealed).is_err());
        }
    }

    /// An AES-256-GCM writer never uses a nonce twice, and two writers of one key draw
    /// different salts (so different subkeys).
    #[test]
    fn gcm_nonces_are_unique_per_writer() {
        let (a, id, key) = Crypt::create(&Secret::KeyFile(vec![3; 32]), Suite::Aes256Gcm).unwrap();
        let b = Crypt::unwrap(&id, &key, &Secret::KeyFile(vec![3; 32]), Suite::Aes256Gcm)
            .unwrap()
            .unwrap();
        let mut seen = std::collections::HashSet::new();
        for w in [&a, &b] {
            for _ in 0..1000 {
                let s = w.seal_entry(b"e", b"same").unwrap();
                assert!(seen.insert(s[..NONCE].to_vec()), "a nonce repeated");
                assert_eq!(&s[..SALT], &w.salt);
            }
        }
        assert_ne!(a.salt, b.salt);
    }

    #[test]
    fn names_are_deterministic_reversible_and_keyed() {
        let (c, ..) = Crypt::create(&Secret::KeyFile(vec![1; 32]), Suite::NEW).unwrap();
        let (other, ..) = Crypt::create(&Secret::KeyFile(vec![1; 32]), Suite::NEW).unwrap();
        let id = "ab".repeat(32);
        for name in [id.as_str(), "v1.0", "push-1234", "AB"] {
            let n = c.encode_name("refs", name);
            assert_eq!(n, c.encode_name("refs", name));
            assert!(!n.contains(name));
            assert_eq!(c.decode_name("refs", &n).as_deref(), Some(name));
            assert_eq!(
                c.decode_name("snapshots", &n),
                None,
                "bound to its directory"
            );
            assert_eq!(other.decode_name("refs", &n), None);
            assert_ne!(other.encode_name("refs", name), n);
        }
    }

    /// The types holding key material wipe it when dropped (checked at compile time), and a
    /// dropped `Crypt` leaves zeros where its master key and naming IV were.
    #[test]
    fn key_material_is_wiped_on_drop() {
        fn wiped_on_drop<T: ZeroizeOnDrop>() {}
        wiped_on_drop::<Crypt>();
        wiped_on_drop::<Secret>();
        wiped_on_drop::<XChaCha20Poly1305>();

        let (c, ..) = Crypt::create(&Secret::KeyFile(vec![7; 32]), Suite::NEW).unwrap();
        let mut slot = std::mem::MaybeUninit::new(c);
        let at = slot.as_ptr();
        // SAFETY: `slot` holds an initialised Crypt; the fields are plain byte arrays inside
        // it, readable before and after the drop (the slot's memory stays ours).
        let before = unsafe { (std::ptr::addr_of!((*at).master).read(), (*at).name_iv) };
        assert_ne!(before.0, [0; MASTER]);
        assert_ne!(before.1, [0; 32]);
        // SAFETY: as above.
        assert_ne!(unsafe { (*at).data_key }, [0; 32]);
        // SAFETY: initialised above and dropped once; only its inline bytes are read after.
        unsafe { slot.assume_init_drop() };
        let after = unsafe {
            (
                std::ptr::addr_of!((*at).master).read(),
                std::ptr::addr_of!((*at).name_iv).read(),
                std::ptr::addr_of!((*at).data_key).read(),
            )
        };
        assert_eq!(after.0, [0; MASTER], "master key left in memory");
        assert_eq!(after.1, [0; 32], "naming IV left in memory");
        assert_eq!(after.2, [0; 32], "data key left in memory");
    }

    #[test]
    fn a_password_key_opens_with_that_password_only() {
        let (c, id, key) = Crypt::create(&Secret::Password("right".into()), Suite::NEW).unwrap();
        assert!(
            Crypt::unwrap(&id, &key, &Secret::Password("wrong".into()), Suite::NEW)
                .unwrap()
                .is_none()
        );
        let k = Crypt::unwrap(&id, &key, &Secret::Password("right".into()), Suite::NEW)
            .unwrap()
            .unwrap();
        assert_eq!(k.master, c.master);
    }
}
