//! A definition's nodes as a graph of indices, with the linear-time algorithms validation and readiness
//! share: topological order (Kahn) and one cycle per strongly connected component (Tarjan).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use super::model::Definition;

pub(crate) struct Graph<'a> {
    /// Each name's first node (validation reports the duplicates).
    pub index: HashMap<&'a str, usize>,
    /// Per node, the nodes it follows: known names only, once each, never itself; in the order written.
    pub upstream: Vec<Vec<usize>>,
    /// Per node, the nodes following it, in node order.
    pub downstream: Vec<Vec<usize>>,
}

impl<'a> Graph<'a> {
    pub fn new(def: &'a Definition) -> Graph<'a> {
        let mut index = HashMap::with_capacity(def.nodes.len());
        for (i, node) in def.nodes.iter().enumerate() {
            index.entry(node.name.as_str()).or_insert(i);
        }
        let mut upstream = vec![Vec::new(); def.nodes.len()];
        let mut downstream = vec![Vec::new(); def.nodes.len()];
        for (i, node) in def.nodes.iter().enumerate() {
            for name in &node.upstream {
                match index.get(name.as_str()) {
                    Some(&u) if u != i && !upstream[i].contains(&u) => {
                        upstream[i].push(u);
                        downstream[u].push(i);
                    }
                    _ => {}
                }
            }
        }
        Graph { index, upstream, downstream }
    }

    pub fn len(&self) -> usize {
        self.upstream.len()
    }

    /// Every node not on or after a cycle, each after all of its upstream nodes and otherwise in the
    /// order written (the first ready node first), so that answers list nodes in a stable order.
    pub fn topological_order(&self) -> Vec<usize> {
        let mut waiting: Vec<usize> = self.upstream.iter().map(Vec::len).collect();
        let mut ready: BinaryHeap<Reverse<usize>> =
            (0..self.len()).filter(|&i| waiting[i] == 0).map(Reverse).collect();
        let mut order = Vec::with_capacity(self.len());
        while let Some(Reverse(u)) = ready.pop() {
            order.push(u);
            for &d in &self.downstream[u] {
                waiting[d] -= 1;
                if waiting[d] == 0 {
                    ready.push(Reverse(d));
                }
            }
        }
        order
    }

    /// One cycle per strongly connected component of more than one node, ordered by the component's
    /// first node, each a path in flow order from that node back to it (the node not repeated).
    pub fn cycles(&self) -> Vec<Vec<usize>> {
        let mut components = self.components();
        components.iter_mut().for_each(|c| c.sort_unstable());
        components.sort_unstable_by_key(|c| c[0]);
        let mut component_of = vec![usize::MAX; self.len()];
        for (k, c) in components.iter().enumerate() {
            c.iter().for_each(|&v| component_of[v] = k);
        }
        let mut parent = vec![usize::MAX; self.len()];
        components
            .iter()
            .enumerate()
            .map(|(k, c)| self.shortest_cycle(c[0], k, &component_of, &mut parent))
            .collect()
    }

    /// Breadth first from `start` inside its component until an edge leads back to it.
    fn shortest_cycle(
        &self,
        start: usize,
        k: usize,
        component_of: &[usize],
        parent: &mut [usize],
    ) -> Vec<usize> {
        let mut queue = VecDeque::from([start]);
        parent[start] = start;
        while let Some(v) = queue.pop_front() {
            for &w in &self.downstream[v] {
                if component_of[w] != k {
                    continue;
                }
                if w == start {
                    let (mut path, mut at) = (vec![v], v);
                    while at != start {
                        at = parent[at];
                        path.push(at);
                    }
                    path.reverse();
                    return path;
                }
                if parent[w] == usize::MAX {
                    parent[w] = v;
                    queue.push_back(w);
                }
            }
        }
        vec![start]
    }

    /// Tarjan's strongly connected components of more than one node, iteratively (no deep recursion
    /// on long chains).
    fn components(&self) -> Vec<Vec<usize>> {
        const UNSEEN: usize = usize::MAX;
        let n = self.len();
        let (mut order, mut low, mut on_stack) = (vec![UNSEEN; n], vec![0; n], vec![false; n]);
        let (mut stack, mut found, mut counter) = (Vec::new(), Vec::new(), 0);
        for root in 0..n {
            if order[root] != UNSEEN {
                continue;
            }
            let mut calls = vec![(root, 0usize)];
            (order[root], low[root], counter) = (counter, counter, counter + 1);
            stack.push(root);
            on_stack[root] = true;
            while let Some(&mut (v, ref mut next)) = calls.last_mut() {
                if let Some(&w) = self.downstream[v].get(*next) {
                    *next += 1;
                    if order[w] == UNSEEN {
                        (order[w], low[w], counter) = (counter, counter, counter + 1);
                        stack.push(w);
                        on_stack[w] = true;
                        calls.push((w, 0));
                    } else if on_stack[w] {
                        low[v] = low[v].min(order[w]);
                    }
                    continue;
                }
                calls.pop();
                if let Some(&(u, _)) = calls.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == order[v] {
                    let mut component = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        component.push(w);
                        if w == v {
                            break;
                        }
                    }
                    if component.len() > 1 {
                        found.push(component);
                    }
                }
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A definition from (name, upstream) pairs.
    fn def(nodes: &[(&str, &[&str])]) -> Definition {
        let nodes: Vec<_> = nodes
            .iter()
            .map(|(name, up)| json!({"name": name, "upstream": up, "kind": {"type": "job", "jobId": 1}}))
            .collect();
        serde_json::from_value(json!({"name": "wf", "jobGroup": 1, "nodes": nodes})).unwrap()
    }

    #[test]
    fn edges_skip_unknown_repeated_and_self_references() {
        let d = def(&[("a", &[]), ("b", &["a", "a", "b", "zz"]), ("a", &["b"])]);
        let g = Graph::new(&d);
        assert_eq!(g.index["a"], 0);
        assert_eq!(g.upstream, [vec![], vec![0], vec![1]]);
        assert_eq!(g.downstream, [vec![1], vec![2], vec![]]);
    }

    #[test]
    fn topological_order_takes_the_first_ready_node_first() {
        let d = def(&[("c", &["b"]), ("a", &[]), ("b", &["a"]), ("d", &[])]);
        assert_eq!(Graph::new(&d).topological_order(), [1, 2, 0, 3]);
        // Nodes on or after a cycle are left out.
        let d = def(&[("a", &[]), ("b", &["a", "c"]), ("c", &["b"]), ("d", &["c"])]);
        assert_eq!(Graph::new(&d).topological_order(), [0]);
    }

    #[test]
    fn one_cycle_per_component_from_its_first_node() {
        let d = def(&[("x", &[]), ("p", &["r"]), ("q", &["p"]), ("r", &["q"]), ("s", &["t"]), ("t", &["s"])]);
        assert_eq!(Graph::new(&d).cycles(), [vec![1, 2, 3], vec![4, 5]]);
        assert!(Graph::new(&def(&[("a", &[]), ("b", &["a"])])).cycles().is_empty());
    }

    #[test]
    fn a_long_chain_does_not_recurse() {
        let names: Vec<String> = (0..20_000).map(|i| format!("n{i}")).collect();
        let ups: Vec<Vec<&str>> =
            (0..20_000).map(|i| if i == 0 { vec![] } else { vec![names[i - 1].as_str()] }).collect();
        let pairs: Vec<(&str, &[&str])> =
            names.iter().zip(&ups).map(|(n, u)| (n.as_str(), u.as_slice())).collect();
        let mut d = def(&pairs);
        assert_eq!(Graph::new(&d).topological_order().len(), 20_000);
        d.nodes[0].upstream.push("n19999".into());
        assert_eq!(Graph::new(&d).cycles()[0].len(), 20_000);
    }
}
