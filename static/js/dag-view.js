/*
 * A read-only drawing of a directed graph on a Cytoscape.js canvas with dagre's layered layout, shared
 * by the workflow run view and the job dependency graph. Nodes are drawn on the canvas only (no element
 * per node), laid out once; a state is a class, so updating colours is a class swap inside cy.batch.
 *
 *   var view = XJ.dagView(container, {
 *       nodes: [{ id: 'a', label: 'extract', state: 'running', shape: 'round-rectangle' }],
 *       edges: [{ source: 'a', target: 'b' }],
 *       states: ['pending', 'running', ...],   // the classes a node's state may take
 *       direction: 'LR',
 *       onSelect: function (id) { ... }
 *   });
 *   view.setStates({ a: 'succeeded' });
 *
 * Labels are given to Cytoscape as data and drawn as canvas text, never parsed as HTML.
 */
(function (window) {
    'use strict';

    var XJ = window.XJ = window.XJ || {};

    /** The fill of each state; the legend uses the same table. */
    var COLOURS = {
        pending: '#d2d6de',
        queued: '#81d4fa',
        running: '#3c8dbc',
        waiting_retry: '#f39c12',
        waiting_approval: '#605ca8',
        succeeded: '#00a65a',
        failed: '#dd4b39',
        skipped: '#eeeeee',
        upstream_failed: '#e08e0b',
        stopped: '#777777',
        success: '#00a65a',
        none: '#d2d6de'
    };
    /** States on a dark fill get white text. */
    var LIGHT_TEXT = ['running', 'waiting_approval', 'succeeded', 'failed', 'stopped', 'success'];

    XJ.dagColours = COLOURS;

    function style(states) {
        var rules = [
            {
                selector: 'node',
                style: {
                    shape: 'data(shape)',
                    width: 'label',
                    height: 30,
                    padding: '10px',
                    label: 'data(label)',
                    'font-size': 12,
                    'text-valign': 'center',
                    'text-halign': 'center',
                    'text-wrap': 'ellipsis',
                    'text-max-width': '180px',
                    'background-color': COLOURS.pending,
                    'border-width': 1,
                    'border-color': '#999',
                    color: '#333'
                }
            },
            {
                selector: 'edge',
                style: {
                    width: 1.5,
                    'curve-style': 'bezier',
                    'target-arrow-shape': 'triangle',
                    'line-color': '#9aa5b1',
                    'target-arrow-color': '#9aa5b1'
                }
            },
            { selector: 'node:selected', style: { 'border-width': 3, 'border-color': '#222d32' } },
            { selector: 'node.disabled', style: { opacity: 0.5, 'border-style': 'dashed' } }
        ];
        states.forEach(function (state) {
            var fill = COLOURS[state] || COLOURS.pending;
            var text = LIGHT_TEXT.indexOf(state) >= 0 ? '#fff' : '#333';
            rules.push({ selector: 'node.s-' + state, style: { 'background-color': fill, color: text } });
        });
        rules.push({ selector: 'node.s-failed, node.s-upstream_failed', style: { 'border-color': '#a94442', 'border-width': 2 } });
        return rules;
    }

    XJ.dagView = function (container, options) {
        var states = options.states || [];
        var elements = [];
        options.nodes.forEach(function (n) {
            elements.push({
                group: 'nodes',
                data: { id: String(n.id), label: String(n.label), shape: n.shape || 'round-rectangle' },
                classes: (n.state ? 's-' + n.state : '') + (n.disabled ? ' disabled' : '')
            });
        });
        options.edges.forEach(function (e, i) {
            elements.push({ group: 'edges', data: { id: 'e' + i, source: String(e.source), target: String(e.target) } });
        });
        var cy = window.cytoscape({
            container: container,
            elements: elements,
            style: style(states),
            layout: { name: 'dagre', rankDir: options.direction || 'LR', nodeSep: 20, rankSep: 60, fit: true, padding: 20 },
            minZoom: 0.05,
            maxZoom: 3,
            wheelSensitivity: 0.3,
            boxSelectionEnabled: false,
            autounselectify: false,
            // Large graphs: draw a cached texture while panning and zooming.
            textureOnViewport: elements.length > 400,
            hideEdgesOnViewport: elements.length > 1500
        });
        cy.nodes().ungrabify();
        // A small graph fitted to the box would be drawn huge: no larger than life.
        if (cy.zoom() > 1) {
            cy.zoom(1);
            cy.center();
        }
        cy.on('tap', 'node', function (event) {
            if (options.onSelect) {
                options.onSelect(event.target.id());
            }
        });
        var stateClasses = states.map(function (s) { return 's-' + s; }).join(' ');
        return {
            cy: cy,
            /** Sets the state of the given nodes (id → state) in one redraw. */
            setStates: function (byId) {
                cy.batch(function () {
                    Object.keys(byId).forEach(function (id) {
                        var node = cy.getElementById(id);
                        if (node.nonempty() && !node.hasClass('s-' + byId[id])) {
                            node.removeClass(stateClasses).addClass('s-' + byId[id]);
                        }
                    });
                });
            },
            /** The state class a node has now, or null. */
            stateOf: function (id) {
                var node = cy.getElementById(String(id));
                for (var i = 0; i < states.length; i++) {
                    if (node.hasClass('s-' + states[i])) {
                        return states[i];
                    }
                }
                return null;
            },
            select: function (id) {
                cy.nodes().unselect();
                cy.getElementById(String(id)).select();
            },
            fit: function () {
                cy.fit(undefined, 20);
                if (cy.zoom() > 1) {
                    cy.zoom(1);
                    cy.center();
                }
            }
        };
    };

    /** Fills a legend element with one swatch per state, labelled by `label(state)`. */
    XJ.dagLegend = function ($legend, states, label) {
        $legend.empty();
        states.forEach(function (state) {
            var $item = window.jQuery('<span class="xj-dag-legend-item">').attr('data-state', state);
            window.jQuery('<i class="xj-dag-swatch">').css('background-color', COLOURS[state] || COLOURS.pending).appendTo($item);
            $item.append(document.createTextNode(label(state)));
            $legend.append($item);
        });
    };
}(window));
