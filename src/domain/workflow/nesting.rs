//! How workflows nest through their sub-workflow nodes: a workflow may not run itself, however far down,
//! and runs at most [`MAX_NESTING`] levels of sub-workflows below it. Checked over the references the
//! service collects from the stored current versions (with the definition being saved in place of its own).

use std::collections::{HashMap, HashSet};

use super::model::{Definition, NodeKind};

/// Sub-workflow levels below a workflow: `a → b` is one.
pub const MAX_NESTING: usize = 5;

/// Why a chain of sub-workflows cannot be saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Nesting {
    /// The workflows of a cycle, its first one again at the end.
    Cycle(Vec<String>),
    /// A chain more than [`MAX_NESTING`] levels deep, from the workflow saved.
    TooDeep(Vec<String>),
}

/// The sub-workflows a definition names, by node, in the order written.
pub fn sub_workflows(def: &Definition) -> impl Iterator<Item = (usize, &str)> {
    def.nodes.iter().enumerate().filter_map(|(i, node)| match &node.kind {
        NodeKind::SubWorkflow { workflow, .. } => Some((i, workflow.as_str())),
        _ => None,
    })
}

/// Whether the chains from `root` through its sub-workflow `first` stay within the rules. `refs` holds the
/// sub-workflows each workflow names, by name; a name it lacks names no workflow (a leaf here).
pub fn check(root: &str, first: &str, refs: &HashMap<String, Vec<String>>) -> Result<(), Nesting> {
    check_under(&[], root, first, refs)
}

/// [`check`] for a workflow that itself runs below `above` (the workflows over it, the top first): its
/// levels count from the top, so that a parent's chain does not grow too deep through it.
pub fn check_under<'a>(
    above: &'a [String],
    root: &'a str,
    first: &'a str,
    refs: &'a HashMap<String, Vec<String>>,
) -> Result<(), Nesting> {
    // From the workflow itself first, so that a cycle is named from it.
    let mut levels = HashMap::new();
    walk(first, &mut vec![root], refs, &mut levels)?;
    if above.is_empty() {
        return Ok(());
    }
    let mut levels = HashMap::new();
    let mut path: Vec<&str> = above.iter().map(String::as_str).chain([root]).collect();
    walk(first, &mut path, refs, &mut levels)
}

/// The longest chain of workflows that run `name` through their sub-workflow nodes, the top first and its
/// direct parent last; empty when none does. `refs` as for [`check`].
pub fn ancestors(name: &str, refs: &HashMap<String, Vec<String>>) -> Vec<String> {
    let mut parents: HashMap<&str, Vec<&str>> = HashMap::new();
    for (parent, subs) in refs {
        for sub in subs {
            parents.entry(sub.as_str()).or_default().push(parent.as_str());
        }
    }
    let mut memo = HashMap::new();
    longest_above(name, &parents, &mut memo, &mut HashSet::new()).into_iter().map(str::to_string).collect()
}

fn longest_above<'a>(
    name: &'a str,
    parents: &HashMap<&'a str, Vec<&'a str>>,
    memo: &mut HashMap<&'a str, Vec<&'a str>>,
    visiting: &mut HashSet<&'a str>,
) -> Vec<&'a str> {
    if let Some(found) = memo.get(name) {
        return found.clone();
    }
    visiting.insert(name);
    let mut best = Vec::new();
    // A cycle among stored workflows (none can be saved, but the database may hold anything) is followed
    // no further round.
    let candidates: Vec<&str> =
        parents.get(name).into_iter().flatten().copied().filter(|p| !visiting.contains(p)).collect();
    for parent in candidates {
        let mut chain = longest_above(parent, parents, memo, visiting);
        chain.push(parent);
        if chain.len() > best.len() {
            best = chain;
        }
    }
    visiting.remove(name);
    memo.insert(name, best.clone());
    best
}

/// Depth-first from `name`, below the chain `path`; `levels` keeps the levels below each workflow already
/// walked through without a problem, so that shared sub-workflows are walked once at most depths.
fn walk<'a>(
    name: &'a str,
    path: &mut Vec<&'a str>,
    refs: &'a HashMap<String, Vec<String>>,
    levels: &mut HashMap<&'a str, usize>,
) -> Result<(), Nesting> {
    if let Some(at) = path.iter().position(|p| *p == name) {
        let mut cycle: Vec<String> = path[at..].iter().map(|p| p.to_string()).collect();
        cycle.push(name.to_string());
        return Err(Nesting::Cycle(cycle));
    }
    // `path` holds the workflows above `name`: as many levels as it is long, less the root.
    if path.len() > MAX_NESTING {
        let mut chain: Vec<String> = path.iter().map(|p| p.to_string()).collect();
        chain.push(name.to_string());
        return Err(Nesting::TooDeep(chain));
    }
    if levels.get(name).is_some_and(|below| path.len() + below <= MAX_NESTING) {
        return Ok(());
    }
    path.push(name);
    let mut below = 0;
    for child in refs.get(name).into_iter().flatten() {
        walk(child, path, refs, levels)?;
        below = below.max(1 + levels.get(child.as_str()).copied().unwrap_or(0));
    }
    path.pop();
    levels.insert(name, below);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(edges: &[(&str, &[&str])]) -> HashMap<String, Vec<String>> {
        edges
            .iter()
            .map(|(from, to)| (from.to_string(), to.iter().map(|t| t.to_string()).collect()))
            .collect()
    }

    fn names(chain: &[&str]) -> Vec<String> {
        chain.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn a_tree_within_the_limit_passes() {
        let r = refs(&[("root", &["a", "b"]), ("a", &["c"]), ("b", &["c"]), ("c", &["d"]), ("d", &["e"])]);
        assert_eq!(check("root", "a", &r), Ok(()));
        assert_eq!(check("root", "b", &r), Ok(()));
        assert_eq!(check("root", "unknown", &r), Ok(()), "a name of no workflow is a leaf");
    }

    #[test]
    fn five_levels_pass_and_six_do_not() {
        let five = refs(&[("a", &["b"]), ("b", &["c"]), ("c", &["d"]), ("d", &["e"])]);
        assert_eq!(check("root", "a", &five), Ok(()), "root → a → b → c → d → e");
        let six = refs(&[("a", &["b"]), ("b", &["c"]), ("c", &["d"]), ("d", &["e"]), ("e", &["f"])]);
        assert_eq!(
            check("root", "a", &six),
            Err(Nesting::TooDeep(names(&["root", "a", "b", "c", "d", "e", "f"])))
        );
    }

    #[test]
    fn a_shared_sub_workflow_is_judged_at_its_deepest_use() {
        // x is reached at level 2 first (fine: 2 + 3 levels below it), then at level 3 (too deep).
        let r = refs(&[("a", &["x", "b"]), ("b", &["x"]), ("x", &["y"]), ("y", &["z"]), ("z", &["w"])]);
        assert_eq!(
            check("root", "a", &r),
            Err(Nesting::TooDeep(names(&["root", "a", "b", "x", "y", "z", "w"])))
        );
    }

    #[test]
    fn a_cycle_back_to_the_workflow_saved_is_named() {
        let r = refs(&[("root", &["a"]), ("a", &["b"]), ("b", &["root"])]);
        assert_eq!(check("root", "a", &r), Err(Nesting::Cycle(names(&["root", "a", "b", "root"]))));
        let direct = refs(&[("a", &["root"])]);
        assert_eq!(check("root", "a", &direct), Err(Nesting::Cycle(names(&["root", "a", "root"]))));
    }

    #[test]
    fn a_cycle_below_among_stored_workflows_is_named_too() {
        let r = refs(&[("a", &["b"]), ("b", &["c"]), ("c", &["b"])]);
        assert_eq!(check("root", "a", &r), Err(Nesting::Cycle(names(&["b", "c", "b"]))));
    }

    #[test]
    fn many_paths_through_a_lattice_are_walked_once() {
        // Ten workflows per level, each naming all ten of the next: 10^5 chains, 50 workflows.
        let mut r = HashMap::new();
        let level = |l: usize| (0..10).map(move |i| format!("l{l}w{i}"));
        r.insert("root".to_string(), level(1).collect());
        for l in 1..5 {
            for w in level(l) {
                r.insert(w, level(l + 1).collect());
            }
        }
        let started = std::time::Instant::now();
        assert_eq!(check("root", "l1w0", &r), Ok(()));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn a_parent_chain_counts_toward_the_depth() {
        let r = refs(&[("top", &["p"]), ("p", &["saved"]), ("side", &["saved"]), ("saved", &[])]);
        assert_eq!(ancestors("saved", &r), names(&["top", "p"]), "the longer of the two chains above");
        assert_eq!(ancestors("top", &r), Vec::<String>::new());
        let below = refs(&[("a", &["b"]), ("b", &["c"])]);
        let above = names(&["top", "p"]);
        assert_eq!(check_under(&above, "saved", "a", &below), Ok(()), "top → p → saved → a → b → c");
        let deeper = refs(&[("a", &["b"]), ("b", &["c"]), ("c", &["d"])]);
        assert_eq!(
            check_under(&above, "saved", "a", &deeper),
            Err(Nesting::TooDeep(names(&["top", "p", "saved", "a", "b", "c", "d"])))
        );
        let looped = refs(&[("a", &["p"])]);
        assert_eq!(
            check_under(&above, "saved", "a", &looped),
            Err(Nesting::Cycle(names(&["p", "saved", "a", "p"])))
        );
    }

    #[test]
    fn ancestors_end_at_a_stored_cycle() {
        let r = refs(&[("a", &["b"]), ("b", &["a", "x"])]);
        assert_eq!(ancestors("x", &r), names(&["a", "b"]));
    }

    #[test]
    fn sub_workflows_are_listed_by_node() {
        let def: Definition = serde_json::from_value(serde_json::json!({
            "name": "wf", "jobGroup": 1, "nodes": [
                {"name": "a", "kind": {"type": "job", "jobId": 1}},
                {"name": "b", "kind": {"type": "subworkflow", "workflow": "other"}},
            ]
        }))
        .unwrap();
        assert_eq!(sub_workflows(&def).collect::<Vec<_>>(), [(1, "other")]);
    }
}
