//! The integer codes xxl-job stores in its tables, as types. Each decodes from the column's SMALLINT
//! (see `crate::storage::models`) and keeps a code 2.4 never writes as read, in `Other`: a Java admin or
//! a hand-made row may hold one, and it must go on meaning what it meant before, "not the known code"
//! wherever a code is compared, and be written back unchanged when its row is saved.

/// An enum of the known codes of one column and an `Other` that keeps any other code, with the code
/// both ways and the code as its JSON (the console and REST API show the column's number).
macro_rules! stored_code {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $code:expr),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
            /// A code 2.4 never writes, kept as read.
            Other(i16),
        }

        impl $name {
            /// The code as stored.
            pub const fn code(self) -> i16 {
                match self {
                    $($name::$variant => $code,)+
                    $name::Other(code) => code,
                }
            }
        }

        impl From<i16> for $name {
            fn from(code: i16) -> $name {
                match code {
                    $(code if code == $code => $name::$variant,)+
                    other => $name::Other(other),
                }
            }
        }

        impl From<$name> for i16 {
            fn from(value: $name) -> i16 {
                value.code()
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_i16(self.code())
            }
        }
    };
}

stored_code! {
    /// `xxl_job_group.address_type`: where a group's executor addresses come from.
    AddressType {
        /// The executors' own registrations (the registry refreshes the list).
        Auto = 0,
        /// A list entered by hand.
        Manual = 1,
    }
}

stored_code! {
    /// `xxl_job_info.trigger_status`: whether the scheduler plans the job's fires.
    TriggerStatus {
        Stopped = 0,
        Running = 1,
    }
}

stored_code! {
    /// `xxl_job_log.alarm_status` (2.4.2: JobFailMonitorHelper): where a failed run's alarm is.
    AlarmStatus {
        /// Taken by a fail monitor pass, which retries and alarms before it releases the row.
        Locked = -1,
        /// Not looked at yet (every run starts so).
        New = 0,
        /// Nothing to retry or alarm about.
        NotNeeded = 1,
        Sent = 2,
        Failed = 3,
    }
}

stored_code! {
    /// `xxl_job_user.role`: 1 for an administrator; any other code, as in 2.4.2, is a user limited to the
    /// executors of their `permission`.
    Role {
        Normal = 0,
        Admin = 1,
    }
}

/// A new user's: limited to the executors of their permission.
impl Default for Role {
    fn default() -> Role {
        Role::Normal
    }
}

/// A new group's: its executors register.
impl Default for AddressType {
    fn default() -> AddressType {
        AddressType::Auto
    }
}

impl AddressType {
    /// The type as a jobs-as-code document declares it: any code but 0 is a list entered by hand, as
    /// the trigger and the console read it.
    pub fn declared(self) -> AddressType {
        match self {
            AddressType::Auto => AddressType::Auto,
            AddressType::Manual | AddressType::Other(_) => AddressType::Manual,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_codes_round_trip_and_others_are_kept_as_read() {
        for code in -3..=5 {
            assert_eq!(AddressType::from(code).code(), code);
            assert_eq!(TriggerStatus::from(code).code(), code);
            assert_eq!(AlarmStatus::from(code).code(), code);
        }
        assert_eq!(
            (AddressType::from(1), TriggerStatus::from(0), AlarmStatus::from(-1), AlarmStatus::from(3)),
            (AddressType::Manual, TriggerStatus::Stopped, AlarmStatus::Locked, AlarmStatus::Failed)
        );
        assert_eq!(TriggerStatus::from(2), TriggerStatus::Other(2));
        assert_ne!(TriggerStatus::from(2), TriggerStatus::Running, "an odd status does not run");
        assert_eq!(AddressType::from(2).declared(), AddressType::Manual);
        assert_eq!(AddressType::from(0).declared(), AddressType::Auto);
    }

    #[test]
    fn the_json_is_the_stored_number() {
        let json =
            serde_json::to_string(&(TriggerStatus::Running, AlarmStatus::Locked, AddressType::Other(7)));
        assert_eq!(json.unwrap(), "[1,-1,7]");
    }
}
