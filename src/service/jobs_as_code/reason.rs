//! A refusal of a document entry in words: the i18n key of its text and the values of its slots, worded
//! where it is shown (in `xxl.job.i18n`'s language, or in English by `Display`, as the command line prints
//! it).

use crate::i18n::I18n;
use std::fmt;

/// A refusal's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    key: &'static str,
    args: Vec<String>,
}

impl Reason {
    pub fn new(key: &'static str, args: &[&dyn fmt::Display]) -> Reason {
        Reason { key, args: args.iter().map(|a| a.to_string()).collect() }
    }

    /// The text in `i18n`'s language.
    pub fn render(&self, i18n: &I18n) -> String {
        let args: Vec<&dyn fmt::Display> = self.args.iter().map(|a| a as &dyn fmt::Display).collect();
        i18n.format(self.key, &args)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&I18n::new("en")))
    }
}
