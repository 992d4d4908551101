//! What changed between two versions of a definition, field by field as the document writes them: the
//! top-level fields, and the nodes matched by name (added, removed, or changed in some of their fields).
//! Moving a node within the list changes nothing a run does, so it is not a change.

use serde::Serialize;
use serde_json::{Map, Value};

use super::model::{Definition, Node};

/// One field with different values; `null` stands for a field one side leaves out (`deadline`).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct FieldChange {
    /// Its name in the document (`schedule`, `retry`).
    pub field: String,
    pub old: Value,
    pub new: Value,
}

/// A node of both versions whose fields differ.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct NodeDiff {
    pub node: String,
    pub fields: Vec<FieldChange>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, utoipa::ToSchema)]
pub struct NodesDiff {
    /// Nodes only the newer version has, in its order.
    pub added: Vec<Node>,
    /// Nodes only the older version has, in its order.
    pub removed: Vec<Node>,
    /// Nodes of both that differ, in the newer version's order.
    pub changed: Vec<NodeDiff>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, utoipa::ToSchema)]
pub struct DefinitionDiff {
    /// Top-level fields that differ (the nodes are compared one by one below).
    pub fields: Vec<FieldChange>,
    pub nodes: NodesDiff,
}

impl DefinitionDiff {
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
            && self.nodes.added.is_empty()
            && self.nodes.removed.is_empty()
            && self.nodes.changed.is_empty()
    }
}

/// The changes from `old` to `new`.
pub fn diff(old: &Definition, new: &Definition) -> DefinitionDiff {
    let mut nodes = NodesDiff::default();
    for node in &new.nodes {
        match old.nodes.iter().find(|o| o.name == node.name) {
            None => nodes.added.push(node.clone()),
            Some(before) => {
                let fields = changed_fields(&object(before), &object(node), &["name"]);
                if !fields.is_empty() {
                    nodes.changed.push(NodeDiff { node: node.name.clone(), fields });
                }
            }
        }
    }
    nodes.removed =
        old.nodes.iter().filter(|o| !new.nodes.iter().any(|n| n.name == o.name)).cloned().collect();
    DefinitionDiff { fields: changed_fields(&object(old), &object(new), &["nodes"]), nodes }
}

/// A value as the document writes it: an object of its fields.
fn object(value: &impl Serialize) -> Map<String, Value> {
    match serde_json::to_value(value) {
        Ok(Value::Object(fields)) => fields,
        _ => Map::new(),
    }
}

/// The fields, but `skip`, whose values differ, by name.
fn changed_fields(old: &Map<String, Value>, new: &Map<String, Value>, skip: &[&str]) -> Vec<FieldChange> {
    let mut names: Vec<&String> =
        old.keys().chain(new.keys()).filter(|k| !skip.contains(&k.as_str())).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|name| {
            let (before, after) = (old.get(name), new.get(name));
            (before != after).then(|| FieldChange {
                field: name.clone(),
                old: before.cloned().unwrap_or(Value::Null),
                new: after.cloned().unwrap_or(Value::Null),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn def(extra: Value, nodes: Value) -> Definition {
        let mut doc = json!({"name": "wf", "jobGroup": 1, "nodes": nodes});
        for (k, v) in extra.as_object().unwrap() {
            doc[k] = v.clone();
        }
        serde_json::from_value(doc).unwrap()
    }

    fn job(name: &str, upstream: &[&str], job_id: i32) -> Value {
        json!({"name": name, "upstream": upstream, "kind": {"type": "job", "jobId": job_id}})
    }

    #[test]
    fn the_same_definition_has_no_change() {
        let d = def(json!({}), json!([job("a", &[], 1), job("b", &["a"], 2)]));
        let found = diff(&d, &d.clone());
        assert!(found.is_empty(), "{found:?}");
        assert_eq!(found, DefinitionDiff::default());
    }

    #[test]
    fn top_level_fields_show_old_and_new_values() {
        let old = def(json!({"description": "one"}), json!([job("a", &[], 1)]));
        let new = def(
            json!({"description": "two", "schedule": {"type": "FIX_RATE", "conf": "60"},
                   "deadline": {"seconds": 30}}),
            json!([job("a", &[], 1)]),
        );
        let found = diff(&old, &new);
        let fields: Vec<(&str, &Value, &Value)> =
            found.fields.iter().map(|c| (c.field.as_str(), &c.old, &c.new)).collect();
        assert_eq!(
            fields,
            [
                ("deadline", &Value::Null, &json!({"seconds": 30, "stop": false})),
                ("description", &json!("one"), &json!("two")),
                (
                    "schedule",
                    &json!({"type": "NONE", "misfire": "DO_NOTHING"}),
                    &json!({"type": "FIX_RATE", "conf": "60", "misfire": "DO_NOTHING"})
                ),
            ]
        );
        assert_eq!(found.nodes, NodesDiff::default());
        // Backwards, the values swap sides.
        let back = diff(&new, &old);
        assert_eq!(back.fields[0].old, json!({"seconds": 30, "stop": false}));
        assert_eq!(back.fields[0].new, Value::Null);
    }

    #[test]
    fn nodes_are_matched_by_name() {
        let old = def(json!({}), json!([job("a", &[], 1), job("b", &["a"], 2), job("gone", &["a"], 3)]));
        let new = def(
            json!({}),
            json!([
                job("new", &[], 4),
                {"name": "b", "upstream": ["a", "new"], "kind": {"type": "job", "jobId": 2},
                 "retry": {"count": 2}},
                job("a", &[], 1),
            ]),
        );
        let found = diff(&old, &new);
        assert!(found.fields.is_empty(), "{:?}", found.fields);
        let names = |nodes: &[Node]| nodes.iter().map(|n| n.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&found.nodes.added), ["new"]);
        assert_eq!(names(&found.nodes.removed), ["gone"]);
        assert_eq!(found.nodes.removed[0].upstream, ["a"], "a removed node as it was");
        assert_eq!(found.nodes.changed.len(), 1, "a moved node is not changed: {:?}", found.nodes.changed);
        let b = &found.nodes.changed[0];
        assert_eq!(b.node, "b");
        let fields: Vec<&str> = b.fields.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(fields, ["retry", "upstream"]);
        assert_eq!((&b.fields[1].old, &b.fields[1].new), (&json!(["a"]), &json!(["a", "new"])));
        assert_eq!(b.fields[0].old["count"], 0);
        assert_eq!(b.fields[0].new["count"], 2);
    }

    #[test]
    fn a_node_whose_kind_changes_shows_both_kinds() {
        let old = def(json!({}), json!([job("a", &[], 1)]));
        let new = def(json!({}), json!([{"name": "a", "kind": {"type": "approval", "approvers": ["ops"]}}]));
        let found = diff(&old, &new);
        assert_eq!(
            found.nodes.changed,
            [NodeDiff {
                node: "a".into(),
                fields: vec![FieldChange {
                    field: "kind".into(),
                    old: json!({"type": "job", "jobId": 1, "param": ""}),
                    new: json!({"type": "approval", "approvers": ["ops"]}),
                }],
            }]
        );
    }

    #[test]
    fn the_answer_names_fields_as_the_document_does() {
        let old = def(json!({}), json!([job("a", &[], 1)]));
        let new = def(json!({"alarmEmail": "ops@example.com"}), json!([job("b", &[], 1)]));
        let value = serde_json::to_value(diff(&old, &new)).unwrap();
        assert_eq!(value["fields"], json!([{"field": "alarmEmail", "old": "", "new": "ops@example.com"}]));
        assert_eq!(value["nodes"]["added"][0]["kind"]["jobId"], 1);
        assert_eq!(value["nodes"]["removed"][0]["name"], "a");
        assert_eq!(value["nodes"]["changed"], json!([]));
    }
}
