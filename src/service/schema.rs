//! The OpenAPI schemas of the forms' enumerated fields (the REST API's document), from the domain's own
//! lists so the two cannot drift.

use crate::domain::routing::RouteStrategy;
use crate::domain::schedule::{MisfireStrategy, ScheduleType};
use crate::domain::{BLOCK_STRATEGIES, GLUE_TYPES};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::Object;

fn names(names: impl IntoIterator<Item = &'static str>) -> Object {
    ObjectBuilder::new().schema_type(Type::String).enum_values(Some(names)).build()
}

pub fn schedule_type() -> Object {
    names(ScheduleType::ALL.map(ScheduleType::name))
}

pub fn misfire_strategy() -> Object {
    names(MisfireStrategy::ALL.map(MisfireStrategy::name))
}

pub fn route_strategy() -> Object {
    names(RouteStrategy::ALL.map(RouteStrategy::name))
}

pub fn block_strategy() -> Object {
    names(BLOCK_STRATEGIES)
}

pub fn glue_type() -> Object {
    names(GLUE_TYPES.map(|(name, _)| name))
}
