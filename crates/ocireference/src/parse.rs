//! The parser: whole-text refusals first, then host, repository, tag and digest.

use crate::{Digest, Error, MAX_NAME_LEN, MAX_REFERENCE_LEN, Reference, SCHEME};

pub(crate) fn parse(s: &str) -> Result<Reference, Error> {
    refuse_hostile_text(s)?;
    let rest = s.strip_prefix(SCHEME).ok_or(Error::MissingScheme)?;
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    if host.contains('@') {
        return Err(Error::Credentials);
    }
    let registry = parse_registry(host)?;
    let (name, digest) = match path.split_once('@') {
        Some((name, digest)) => (name, Some(parse_digest(digest)?)),
        None => (path, None),
    };
    let (repository, tag) = split_tag(name);
    let repository = parse_repository(repository)?;
    let tag = tag.map(parse_tag).transpose()?;
    let name_len = registry.len() + 1 + repository.len();
    if name_len > MAX_NAME_LEN {
        return Err(Error::TooLong {
            len: name_len,
            max: MAX_NAME_LEN,
        });
    }
    Ok(Reference {
        registry,
        repository,
        tag,
        digest,
    })
}

fn refuse_hostile_text(s: &str) -> Result<(), Error> {
    if s.is_empty() {
        return Err(Error::Empty);
    }
    if s.len() > MAX_REFERENCE_LEN {
        return Err(Error::TooLong {
            len: s.len(),
            max: MAX_REFERENCE_LEN,
        });
    }
    if s.trim() != s {
        return Err(Error::SurroundingWhitespace);
    }
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Error::ControlCharacter);
    }
    if s.contains('\\') {
        return Err(Error::Backslash);
    }
    let lower = s.to_ascii_lowercase();
    if lower.contains("%2f") || lower.contains("%5c") {
        return Err(Error::EncodedSeparator);
    }
    if s.contains(['?', '#']) {
        return Err(Error::QueryOrFragment);
    }
    Ok(())
}

fn parse_registry(host: &str) -> Result<String, Error> {
    let invalid = || Error::InvalidHost(host.to_owned());
    let (name, port) = if let Some(v6) = host.strip_prefix('[') {
        let (addr, after) = v6.split_once(']').ok_or_else(invalid)?;
        if addr.is_empty()
            || !addr
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        {
            return Err(invalid());
        }
        match after {
            "" => (host, None),
            p => (
                &host[..host.len() - p.len()],
                Some(p.strip_prefix(':').ok_or_else(invalid)?),
            ),
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        }
    };
    if !name.starts_with('[') && !is_host_name(name) {
        return Err(invalid());
    }
    if let Some(port) = port {
        let valid = !port.is_empty()
            && port.len() <= 5
            && port.bytes().all(|b| b.is_ascii_digit())
            && port.parse::<u32>().is_ok_and(|p| (1..=65535).contains(&p));
        if !valid {
            return Err(Error::InvalidPort(port.to_owned()));
        }
    }
    Ok(host.to_owned())
}

/// DNS labels of letters, digits and inner hyphens (this also covers dotted IPv4).
fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// A tag is the part after the last `:` of the last path segment (a port lives in the host).
fn split_tag(name: &str) -> (&str, Option<&str>) {
    let last_segment_start = name.rfind('/').map_or(0, |i| i + 1);
    match name[last_segment_start..].rfind(':') {
        Some(i) => {
            let at = last_segment_start + i;
            (&name[..at], Some(&name[at + 1..]))
        }
        None => (name, None),
    }
}

fn parse_repository(repository: &str) -> Result<String, Error> {
    if repository.is_empty() {
        return Err(Error::MissingRepository);
    }
    if repository.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err(Error::UppercaseRepository(repository.to_owned()));
    }
    if !repository.split('/').all(is_path_component) {
        return Err(Error::InvalidRepository(repository.to_owned()));
    }
    Ok(repository.to_owned())
}

/// `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*` from the distribution specification.
fn is_path_component(component: &str) -> bool {
    let bytes = component.as_bytes();
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    if !alnum(first) || !alnum(last) {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        if alnum(bytes[i]) {
            i += 1;
            continue;
        }
        let run_start = i;
        while i < bytes.len() && !alnum(bytes[i]) {
            i += 1;
        }
        let separator = &component[run_start..i];
        let valid = matches!(separator, "." | "_" | "__") || separator.bytes().all(|b| b == b'-');
        if !valid {
            return false;
        }
    }
    true
}

fn parse_tag(tag: &str) -> Result<String, Error> {
    let bytes = tag.as_bytes();
    let valid = !bytes.is_empty()
        && bytes.len() <= 128
        && (bytes[0].is_ascii_alphanumeric() || bytes[0] == b'_')
        && bytes[1..]
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if valid {
        Ok(tag.to_owned())
    } else {
        Err(Error::InvalidTag(tag.to_owned()))
    }
}

fn parse_digest(digest: &str) -> Result<Digest, Error> {
    if digest.contains('@') {
        return Err(Error::Credentials);
    }
    digest
        .parse()
        .map_err(|_| Error::InvalidDigest(digest.to_owned()))
}
