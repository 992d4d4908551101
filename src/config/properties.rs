//! Java `.properties` syntax, as `java.util.Properties.load` reads it.

/// One `key=value` pair; `line` is where its logical line starts (1-based).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Property {
    pub key: String,
    pub value: String,
    pub line: usize,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub line: usize,
    pub message: String,
}

/// Java's whitespace in this format: space, tab and form feed (not newlines, which end lines).
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\x0c')
}

pub(crate) fn parse(text: &str) -> Result<Vec<Property>, SyntaxError> {
    logical_lines(text)
        .into_iter()
        .map(|(line, text)| {
            let (key, value) = split_key_value(&text);
            let unescape = |s| unescape(s).map_err(|message| SyntaxError { line, message });
            Ok(Property { key: unescape(key)?, value: unescape(value)?, line })
        })
        .collect()
}

/// Joins continued lines. Comments and blank lines are dropped, but only where a logical line starts:
/// a continuation line beginning with `#` is data, as in Java.
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    // `\r\n`, `\r` and `\n` all end a line.
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut lines = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (index, raw) in text.split('\n').enumerate() {
        let content = raw.trim_start_matches(is_blank);
        let (start, mut buffer) = match open.take() {
            Some(continued) => continued,
            None if content.is_empty() || content.starts_with(['#', '!']) => continue,
            None => (index + 1, String::new()),
        };
        let trailing_backslashes = content.chars().rev().take_while(|c| *c == '\\').count();
        if trailing_backslashes % 2 == 1 {
            buffer.push_str(&content[..content.len() - 1]);
            open = Some((start, buffer));
        } else {
            buffer.push_str(content);
            lines.push((start, buffer));
        }
    }
    lines.extend(open);
    lines
}

/// The key ends at the first unescaped `=`, `:` or blank; blanks and at most one `=`/`:` follow it.
fn split_key_value(line: &str) -> (&str, &str) {
    let mut escaped = false;
    let mut key_end = line.len();
    let mut separator_seen = false;
    for (i, c) in line.char_indices() {
        if !escaped && (c == '=' || c == ':' || is_blank(c)) {
            key_end = i;
            separator_seen = c != ' ' && c != '\t' && c != '\x0c';
            break;
        }
        escaped = c == '\\' && !escaped;
    }
    let mut rest = line[key_end..].chars();
    if separator_seen {
        rest.next();
    }
    let mut value = rest.as_str();
    loop {
        value = value.trim_start_matches(is_blank);
        match value.chars().next() {
            Some(c @ ('=' | ':')) if !separator_seen => {
                separator_seen = true;
                value = &value[c.len_utf8()..];
            }
            _ => break,
        }
    }
    (&line[..key_end], value)
}

/// Resolves `\uXXXX`, `\t`, `\n`, `\r`, `\f`; any other escaped character stands for itself.
fn unescape(s: &str) -> Result<String, String> {
    // UTF-16 units, so that escaped surrogate pairs (`\uD83D\uDE00`) combine.
    let mut units: Vec<u16> = Vec::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        let c = match c {
            '\\' => match chars.next() {
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    let unit = (hex.len() == 4 && hex.chars().all(|h| h.is_ascii_hexdigit()))
                        .then(|| u16::from_str_radix(&hex, 16).ok())
                        .flatten()
                        .ok_or_else(|| "malformed \\uXXXX escape".to_string())?;
                    units.push(unit);
                    continue;
                }
                Some('t') => '\t',
                Some('n') => '\n',
                Some('r') => '\r',
                Some('f') => '\x0c',
                Some(other) => other,
                // A lone trailing backslash (only possible at the end of the file) is dropped.
                None => break,
            },
            c => c,
        };
        let mut buf = [0u16; 2];
        units.extend_from_slice(c.encode_utf16(&mut buf));
    }
    Ok(String::from_utf16_lossy(&units))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(text: &str) -> Vec<(String, String)> {
        parse(text).unwrap().into_iter().map(|p| (p.key, p.value)).collect()
    }

    fn pair(key: &str, value: &str) -> (String, String) {
        (key.to_string(), value.to_string())
    }

    #[test]
    fn separators() {
        assert_eq!(
            pairs("a=1\nb:2\nc 3\nd\t=\t4\ne : 5\nf\ng = = 7\nh=:8\n  i=9"),
            vec![
                pair("a", "1"),
                pair("b", "2"),
                pair("c", "3"),
                pair("d", "4"),
                pair("e", "5"),
                pair("f", ""),
                pair("g", "= 7"),
                pair("h", ":8"),
                pair("i", "9"),
            ]
        );
    }

    #[test]
    fn values_keep_trailing_blanks_and_inner_separators() {
        assert_eq!(
            pairs("url=jdbc:mysql://h:3306/db?a=b&c=d  \nk = x = y"),
            vec![pair("url", "jdbc:mysql://h:3306/db?a=b&c=d  "), pair("k", "x = y")]
        );
    }

    #[test]
    fn comments_and_blank_lines() {
        assert_eq!(
            pairs("# a=1\n  ! b=2\n\n   \n\tc=3 # not a comment\n"),
            vec![pair("c", "3 # not a comment")]
        );
    }

    #[test]
    fn continuation_lines() {
        assert_eq!(
            pairs("a=one, \\\n     two, \\\n\tthree\nb=4"),
            vec![pair("a", "one, two, three"), pair("b", "4")]
        );
        // A continued line starting with `#` is data, not a comment.
        assert_eq!(pairs("a=x\\\n#y"), vec![pair("a", "x#y")]);
        // An even number of backslashes is an escaped backslash, not a continuation.
        assert_eq!(pairs("a=x\\\\\nb=y"), vec![pair("a", "x\\"), pair("b", "y")]);
        // A blank line ends a continuation; a continuation at the end of the file just ends.
        assert_eq!(pairs("a=x\\\n\nb=y\\"), vec![pair("a", "x"), pair("b", "y")]);
        // A comment line ending in a backslash does not swallow the next line.
        assert_eq!(pairs("# c\\\nb=y"), vec![pair("b", "y")]);
    }

    #[test]
    fn line_endings_and_line_numbers() {
        let parsed = parse("# c\r\na=1\r\n\rb=2\\\r  3\nc=4").unwrap();
        let lines: Vec<(&str, &str, usize)> =
            parsed.iter().map(|p| (p.key.as_str(), p.value.as_str(), p.line)).collect();
        assert_eq!(lines, vec![("a", "1", 2), ("b", "23", 4), ("c", "4", 6)]);
    }

    #[test]
    fn escapes() {
        assert_eq!(pairs(r"a=\u4e2d\u6587\tx\ny\rz\fw"), vec![pair("a", "中文\tx\ny\rz\x0cw")]);
        assert_eq!(pairs(r"k\ e\=y\:=v\a\#\\"), vec![pair("k e=y:", "va#\\")]);
        assert_eq!(pairs(r"e=\uD83D\uDE00"), vec![pair("e", "😀")]);
        assert_eq!(pairs("raw=中文 ok"), vec![pair("raw", "中文 ok")]);
        // Escaped leading blanks survive the blank skipping.
        assert_eq!(pairs(r"a=\ \ x"), vec![pair("a", "  x")]);
    }

    #[test]
    fn malformed_unicode_escape_is_an_error_with_its_line() {
        for bad in [r"a=\u12", r"a=\u12G4", r"a=\u"] {
            let err = parse(&format!("ok=1\n{bad}")).unwrap_err();
            assert_eq!(err.line, 2, "{bad}");
            assert!(err.message.contains("\\uXXXX"), "{bad}");
        }
    }

    #[test]
    fn empty_input() {
        assert!(parse("").unwrap().is_empty());
        assert!(parse("\n\n# only comments\n").unwrap().is_empty());
    }
}
