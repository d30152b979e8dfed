//! The Prometheus text exposition format, parsed as the alerting suite reads the manager's real
//! `/metrics` (and feeds its series to promtool).

/// One sample of the Prometheus text exposition format.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The metric name.
    pub name: String,
    /// Its labels, in the order exposed.
    pub labels: Vec<(String, String)>,
    /// The value.
    pub value: f64,
}

impl Sample {
    /// `name{a="b",…}` (the labels sorted), as promtool's `input_series` names a series.
    pub fn series(&self) -> String {
        let mut labels = self.labels.clone();
        labels.sort();
        let inner: Vec<String> = labels
            .iter()
            .map(|(k, v)| {
                let v = v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
                format!("{k}=\"{v}\"")
            })
            .collect();
        format!("{}{{{}}}", self.name, inner.join(","))
    }
}

/// Parses the Prometheus text format (comments and blank lines skipped; a line that is not a
/// sample is an error naming it).
pub fn parse_exposition(text: &str) -> Result<Vec<Sample>, String> {
    let mut samples = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let name_end = line
            .find(|c: char| c == '{' || c.is_whitespace())
            .ok_or_else(|| format!("no value: {line}"))?;
        let name = line[..name_end].to_owned();
        let mut rest = &line[name_end..];
        let mut labels = Vec::new();
        if let Some(body) = rest.strip_prefix('{') {
            let mut chars = body.char_indices().peekable();
            let end = loop {
                // Skip separators.
                while let Some((_, c)) = chars.peek() {
                    if *c == ',' || c.is_whitespace() {
                        chars.next();
                    } else {
                        break;
                    }
                }
                let Some((start, c)) = chars.next() else {
                    return Err(format!("unterminated labels: {line}"));
                };
                if c == '}' {
                    break start + 1;
                }
                let mut key = String::from(c);
                for (_, c) in chars.by_ref() {
                    if c == '=' {
                        break;
                    }
                    key.push(c);
                }
                if chars.next().map(|(_, c)| c) != Some('"') {
                    return Err(format!("label {key} has no quoted value: {line}"));
                }
                let mut value = String::new();
                let mut escaped = false;
                let mut closed = false;
                for (_, c) in chars.by_ref() {
                    if escaped {
                        value.push(match c {
                            'n' => '\n',
                            other => other,
                        });
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        closed = true;
                        break;
                    } else {
                        value.push(c);
                    }
                }
                if !closed {
                    return Err(format!("unterminated label value: {line}"));
                }
                labels.push((key.trim().to_owned(), value));
            };
            rest = &body[end..];
        }
        let value_text = rest
            .split_whitespace()
            .next()
            .ok_or_else(|| format!("no value: {line}"))?;
        let value = match value_text {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            "NaN" => f64::NAN,
            v => v.parse().map_err(|e| format!("value {v:?}: {e}: {line}"))?,
        };
        samples.push(Sample { name, labels, value });
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_samples_with_labels_escapes_and_specials() {
        let text = "# HELP x y\n# TYPE ptah_leader gauge\nptah_leader 1\n\
            ptah_operation_results_total{kind=\"schema\",operation=\"plan\",result=\"failed\"} 3\n\
            h_bucket{le=\"+Inf\",a=\"q\\\"uote, b\"} 2 1700000000\nt_seconds 1.7e9\n";
        let samples = parse_exposition(text).expect("parse");
        assert_eq!(samples.len(), 4);
        assert_eq!(samples[0].series(), "ptah_leader{}");
        assert_eq!(samples[1].value, 3.0);
        assert_eq!(
            samples[1].series(),
            "ptah_operation_results_total{kind=\"schema\",operation=\"plan\",result=\"failed\"}"
        );
        assert_eq!(samples[2].labels[1], ("a".into(), "q\"uote, b".into()));
        assert_eq!(samples[2].series(), "h_bucket{a=\"q\\\"uote, b\",le=\"+Inf\"}");
        assert_eq!(samples[3].value, 1.7e9);
        assert_eq!(
            parse_exposition("x{a=b} 1"),
            Err("label a has no quoted value: x{a=b} 1".to_owned())
        );
        // The label set ends with the line: `x{a="b" 1` would read `1` as a label without a value.
        assert_eq!(
            parse_exposition("x{a=\"b\""),
            Err("unterminated labels: x{a=\"b\"".to_owned())
        );
    }
}
