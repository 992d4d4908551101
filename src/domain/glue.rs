//! What runs a job on its executor: its GLUE type (spec 3.5) and its block strategy (spec 3.4). The job
//! row keeps both as the text it was stored with, like the schedule and route strategies: an executor
//! may know a name this admin does not, and the admin forwards it as it is.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GlueType {
    /// A handler compiled into the executor.
    Bean,
    /// A Groovy source, shown as Java.
    Groovy,
    Shell,
    Python,
    Php,
    Nodejs,
    PowerShell,
}

impl GlueType {
    pub const ALL: [GlueType; 7] = [
        GlueType::Bean,
        GlueType::Groovy,
        GlueType::Shell,
        GlueType::Python,
        GlueType::Php,
        GlueType::Nodejs,
        GlueType::PowerShell,
    ];

    pub fn from_name(name: &str) -> Option<GlueType> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The stored name.
    pub fn name(self) -> &'static str {
        match self {
            GlueType::Bean => "BEAN",
            GlueType::Groovy => "GLUE_GROOVY",
            GlueType::Shell => "GLUE_SHELL",
            GlueType::Python => "GLUE_PYTHON",
            GlueType::Php => "GLUE_PHP",
            GlueType::Nodejs => "GLUE_NODEJS",
            GlueType::PowerShell => "GLUE_POWERSHELL",
        }
    }

    /// The name the console shows, in every language.
    pub fn title(self) -> &'static str {
        match self {
            GlueType::Bean => "BEAN",
            GlueType::Groovy => "GLUE(Java)",
            GlueType::Shell => "GLUE(Shell)",
            GlueType::Python => "GLUE(Python)",
            GlueType::Php => "GLUE(PHP)",
            GlueType::Nodejs => "GLUE(Nodejs)",
            GlueType::PowerShell => "GLUE(PowerShell)",
        }
    }
}

/// What an executor does with a run that arrives while the job's previous one still runs; executors
/// enforce it, the admin validates and forwards it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockStrategy {
    SerialExecution,
    DiscardLater,
    CoverEarly,
}

impl BlockStrategy {
    pub const ALL: [BlockStrategy; 3] =
        [BlockStrategy::SerialExecution, BlockStrategy::DiscardLater, BlockStrategy::CoverEarly];

    pub fn from_name(name: &str) -> Option<BlockStrategy> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            BlockStrategy::SerialExecution => "SERIAL_EXECUTION",
            BlockStrategy::DiscardLater => "DISCARD_LATER",
            BlockStrategy::CoverEarly => "COVER_EARLY",
        }
    }

    pub fn i18n_key(self) -> &'static str {
        match self {
            BlockStrategy::SerialExecution => "jobconf_block_SERIAL_EXECUTION",
            BlockStrategy::DiscardLater => "jobconf_block_DISCARD_LATER",
            BlockStrategy::CoverEarly => "jobconf_block_COVER_EARLY",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_exactly() {
        for glue in GlueType::ALL {
            assert_eq!(GlueType::from_name(glue.name()), Some(glue));
        }
        for block in BlockStrategy::ALL {
            assert_eq!(BlockStrategy::from_name(block.name()), Some(block));
            assert!(block.i18n_key().ends_with(block.name()));
        }
        let names = GlueType::ALL.map(GlueType::name);
        let stored = [
            "BEAN",
            "GLUE_GROOVY",
            "GLUE_SHELL",
            "GLUE_PYTHON",
            "GLUE_PHP",
            "GLUE_NODEJS",
            "GLUE_POWERSHELL",
        ];
        assert_eq!(names, stored);
        assert_eq!(
            BlockStrategy::ALL.map(BlockStrategy::name),
            ["SERIAL_EXECUTION", "DISCARD_LATER", "COVER_EARLY"]
        );
        assert_eq!((GlueType::from_name("bean"), BlockStrategy::from_name("")), (None, None));
    }
}
