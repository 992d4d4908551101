/*
 * The workflow editor (templates/workflow_edit.html). One definition object is the truth; the canvas
 * (Cytoscape, drawn on a canvas so a node costs no DOM), the table, the JSON and the TOML texts are views of
 * it, each editable and each rebuilt from it after an edit elsewhere. Every change is sent to the server's
 * validation (the checks of a save, nothing saved) and its problems are shown with node and field; a cycle's
 * nodes and edges are marked on the canvas. Texts from the server or the user never become markup unescaped.
 */
(function ($, cytoscape) {
    'use strict';

    var esc = XJ.escapeHtml;
    var $page = $('#workflowEditor');
    var state = {
        id: Number($page.attr('data-workflow-id')) || 0,
        version: 0,
        def: null,
        jobs: [],
        dirty: false,
        validation: null,
        anchor: null
    };
    var VALIDATE_DELAY_MS = 400;
    var NODE_NAME_MAX = 64;

    // --------------------------------------------------------------------------------------------
    // The definition

    function freshDefinition() {
        var group = (window.WORKFLOW_GROUPS || [])[0];
        return {
            name: '', jobGroup: group ? group.id : 0, description: '',
            schedule: { type: 'NONE', misfire: 'DO_NOTHING' }, params: {},
            concurrency: { maxRuns: 1, onLimit: 'queue', maxQueued: 100 }, failureStrategy: 'continue',
            alarmEmail: '', nodes: []
        };
    }

    /** The optional fields a node may leave out, filled in so the panel has something to show. */
    function normalised(node) {
        node.upstream = node.upstream || [];
        node.triggerRule = node.triggerRule || 'all_success';
        node.retry = $.extend({ count: 0, delayMs: 300000, factor: 1.0, capMs: 86400000, jitter: 0.0 }, node.retry || {});
        node.timeoutSeconds = node.timeoutSeconds || 0;
        node.allowFailure = !!node.allowFailure;
        node.disabled = !!node.disabled;
        return node;
    }

    function nodeNamed(name) {
        var nodes = state.def.nodes;
        for (var i = 0; i < nodes.length; i++) {
            if (nodes[i].name === name) {
                return nodes[i];
            }
        }
        return null;
    }

    /** A name for a new node from `base`: the characters a node name may hold, unique in the workflow. */
    function uniqueName(base) {
        var stem = String(base || 'node').replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, NODE_NAME_MAX - 4) || 'node';
        var name = stem;
        for (var n = 2; nodeNamed(name); n++) {
            name = stem + '_' + n;
        }
        return name;
    }

    function jobOf(id) {
        for (var i = 0; i < state.jobs.length; i++) {
            if (state.jobs[i].id === id) {
                return state.jobs[i];
            }
        }
        return null;
    }

    /** The second line of a node's label: what it runs. */
    function kindText(node) {
        var kind = node.kind || {};
        switch (kind.type) {
            case 'job':
                var job = jobOf(kind.jobId);
                return '#' + kind.jobId + (job ? ' ' + job.jobDesc : '');
            case 'subworkflow':
                return '⇢ ' + (kind.workflow || '');
            case 'branch':
                return I18n.workflow_kind_branch;
            case 'approval':
                return I18n.workflow_kind_approval;
            default:
                return '';
        }
    }

    function changed() {
        state.dirty = true;
        $('#wfDirty').show();
        $('#wfTitle').text(state.def.name || '');
        scheduleValidation();
    }

    // --------------------------------------------------------------------------------------------
    // The canvas

    var cy = cytoscape({
        container: document.getElementById('wfCanvas'),
        wheelSensitivity: 0.3,
        boxSelectionEnabled: true,
        style: [
            {
                selector: 'node',
                style: {
                    shape: 'round-rectangle', width: 150, height: 44, 'background-color': '#ecf5fb',
                    'border-width': 1, 'border-color': '#3c8dbc', label: 'data(label)', 'text-wrap': 'wrap',
                    'text-max-width': 140, 'text-valign': 'center', 'font-size': 11, color: '#333'
                }
            },
            { selector: 'node.k-branch', style: { shape: 'diamond', width: 90, height: 60, 'background-color': '#fff7e6' } },
            { selector: 'node.k-subworkflow', style: { 'background-color': '#eef7ee', 'border-style': 'double', 'border-width': 3 } },
            { selector: 'node.k-approval', style: { shape: 'ellipse', 'background-color': '#f7eefa' } },
            { selector: 'node.disabled', style: { opacity: 0.45, 'border-style': 'dashed' } },
            { selector: 'node.bad', style: { 'border-color': '#dd4b39', 'border-width': 3 } },
            { selector: 'node:selected', style: { 'border-color': '#00a65a', 'border-width': 3 } },
            { selector: 'node.anchor', style: { 'border-color': '#f39c12', 'border-width': 4 } },
            {
                selector: 'edge',
                style: {
                    width: 2, 'line-color': '#9aa5b1', 'target-arrow-color': '#9aa5b1', 'target-arrow-shape': 'triangle',
                    'curve-style': 'bezier'
                }
            },
            { selector: 'edge:selected', style: { 'line-color': '#00a65a', 'target-arrow-color': '#00a65a' } },
            { selector: '.cycle', style: { 'line-color': '#dd4b39', 'target-arrow-color': '#dd4b39', 'border-color': '#dd4b39', 'border-width': 4, width: 4 } }
        ]
    });

    function nodeElement(node, position) {
        return {
            group: 'nodes',
            data: { id: 'n:' + node.name, name: node.name, label: node.name + '\n' + kindText(node) },
            classes: 'k-' + ((node.kind && node.kind.type) || 'job') + (node.disabled ? ' disabled' : ''),
            position: position || { x: 0, y: 0 }
        };
    }

    function edgeElement(from, to) {
        return { group: 'edges', data: { id: 'e:' + from + '>' + to, source: 'n:' + from, target: 'n:' + to } };
    }

    /**
     * Every edge the definition's upstream lists name, between nodes that exist, each once: a text may
     * repeat a name, which the validation reports, but the canvas cannot draw twice.
     */
    function edgeElements() {
        var edges = [];
        var seen = {};
        $.each(state.def.nodes, function (i, node) {
            $.each(node.upstream, function (k, up) {
                var edge = edgeElement(up, node.name);
                if (nodeNamed(up) && up !== node.name && !seen[edge.data.id]) {
                    seen[edge.data.id] = true;
                    edges.push(edge);
                }
            });
        });
        return edges;
    }

    function layout() {
        cy.layout({ name: 'dagre', rankDir: 'TB', nodeSep: 20, rankSep: 60, animate: false, fit: true }).run();
    }

    /** Draws the whole definition again, keeping the places of nodes that stay; lays out only new ones. */
    function redraw() {
        var places = {};
        cy.nodes().forEach(function (n) {
            places[n.data('name')] = $.extend({}, n.position());
        });
        var placed = true;
        var drawn = {};
        cy.batch(function () {
            cy.elements().remove();
            // A second node of a name (the validation names it) is not drawn.
            cy.add($.map(state.def.nodes, function (node) {
                if (drawn[node.name]) {
                    return null;
                }
                drawn[node.name] = true;
                placed = placed && !!places[node.name];
                return nodeElement(node, places[node.name]);
            }));
            cy.add(edgeElements());
        });
        if (!placed) {
            layout();
        }
        markProblems();
    }

    /** A node's look after its settings changed (its name is its element's id: a rename redraws). */
    function restyle(node) {
        var element = cy.getElementById('n:' + node.name);
        element.data('label', node.name + '\n' + kindText(node));
        element.classes('k-' + node.kind.type + (node.disabled ? ' disabled' : ''));
    }

    function connect(from, to) {
        var target = nodeNamed(to);
        if (!target || from === to || target.upstream.indexOf(from) >= 0) {
            return;
        }
        target.upstream.push(from);
        cy.add(edgeElement(from, to));
        changed();
        if (selectedNode() === target) {
            showNode(target);
        }
    }

    function removeSelected() {
        var removed = false;
        cy.batch(function () {
            cy.edges(':selected').forEach(function (edge) {
                var target = nodeNamed(edge.target().data('name'));
                var from = edge.source().data('name');
                target.upstream = $.grep(target.upstream, function (up) { return up !== from; });
                edge.remove();
                removed = true;
            });
            cy.nodes(':selected').forEach(function (element) {
                removeNode(element.data('name'));
                removed = true;
            });
        });
        if (removed) {
            showNode(null);
            changed();
        }
    }

    function removeNode(name) {
        state.def.nodes = $.grep(state.def.nodes, function (node) { return node.name !== name; });
        $.each(state.def.nodes, function (i, node) {
            node.upstream = $.grep(node.upstream, function (up) { return up !== name; });
        });
        cy.getElementById('n:' + name).remove();
    }

    function addNode(node, position) {
        state.def.nodes.push(normalised(node));
        var element = cy.add(nodeElement(node, position));
        cy.$(':selected').unselect();
        element.select();
        showNode(node);
        changed();
    }

    /** The model position of a point given in the page's client coordinates. */
    function modelPoint(clientX, clientY) {
        var box = cy.container().getBoundingClientRect();
        var pan = cy.pan();
        var zoom = cy.zoom();
        return { x: (clientX - box.left - pan.x) / zoom, y: (clientY - box.top - pan.y) / zoom };
    }

    function selectedNode() {
        var selected = cy.nodes(':selected');
        return selected.length === 1 ? nodeNamed(selected.data('name')) : null;
    }

    // Selecting a node anchors it; shift-clicking another then draws the edge from the anchor to it.
    cy.on('tap', 'node', function (event) {
        var name = event.target.data('name');
        var shift = event.originalEvent && event.originalEvent.shiftKey;
        if (shift && state.anchor && state.anchor !== name) {
            connect(state.anchor, name);
            return;
        }
        cy.nodes('.anchor').removeClass('anchor');
        state.anchor = name;
        event.target.addClass('anchor');
    });
    cy.on('select unselect', 'node', function () {
        showNode(selectedNode());
    });
    cy.on('tap', function (event) {
        if (event.target === cy) {
            state.anchor = null;
            cy.nodes('.anchor').removeClass('anchor');
        }
    });

    $(document).on('keydown', function (e) {
        if ((e.key === 'Delete' || e.key === 'Backspace') && !$(e.target).is('input, textarea, select')) {
            if ($('#wfGraphTab').hasClass('active')) {
                e.preventDefault();
                removeSelected();
            }
        }
    });

    // --------------------------------------------------------------------------------------------
    // Jobs to drag in

    function renderJobs() {
        var filter = $.trim($('#wfJobFilter').val()).toLowerCase();
        var html = '';
        $.each(state.jobs, function (i, job) {
            var text = job.jobDesc + ' ' + job.executorHandler + ' #' + job.id;
            if (filter && text.toLowerCase().indexOf(filter) < 0) {
                return;
            }
            html += '<div class="wf-job" draggable="true" data-job-id="' + esc(job.id) + '">#' + esc(job.id) + ' ' +
                esc(job.jobDesc) + '<small>' + esc(job.executorHandler) + '</small></div>';
        });
        $('#wfJobs').html(html);
        var options = '';
        $.each(state.jobs, function (i, job) {
            options += '<option value="' + esc(job.id) + '">#' + esc(job.id) + ' ' + esc(job.jobDesc) + '</option>';
        });
        $('#wfNodeJob').html(options);
    }

    function loadJobs() {
        if (!state.def.jobGroup) {
            state.jobs = [];
            renderJobs();
            return $.Deferred().resolve().promise();
        }
        return XJ.call('/workflow/jobs', { jobGroup: state.def.jobGroup }, {
            success: function (jobs) {
                state.jobs = jobs || [];
                renderJobs();
                cy.batch(function () {
                    $.each(state.def.nodes, function (i, node) {
                        restyle(node);
                    });
                });
            }
        });
    }

    $('#wfJobFilter').on('input', renderJobs);
    $('#wfJobs').on('dragstart', '.wf-job', function (e) {
        e.originalEvent.dataTransfer.setData('text/plain', 'job:' + $(this).attr('data-job-id'));
        e.originalEvent.dataTransfer.effectAllowed = 'copy';
    });
    $('#wfCanvas').on('dragover', function (e) {
        e.preventDefault();
        e.originalEvent.dataTransfer.dropEffect = 'copy';
    }).on('drop', function (e) {
        e.preventDefault();
        var data = String(e.originalEvent.dataTransfer.getData('text/plain') || '');
        var id = Number(data.replace(/^job:/, ''));
        var job = jobOf(id);
        if (data.indexOf('job:') !== 0 || !job) {
            return;
        }
        var node = { name: uniqueName(job.executorHandler || job.jobDesc), kind: { type: 'job', jobId: id, param: '' } };
        addNode(node, modelPoint(e.originalEvent.clientX, e.originalEvent.clientY));
    });

    $('#wfAddNode').on('click', function () {
        var extent = cy.extent();
        addNode({ name: uniqueName('approval'), kind: { type: 'approval', approvers: [] } },
            { x: (extent.x1 + extent.x2) / 2, y: (extent.y1 + extent.y2) / 2 });
    });
    $('#wfLayout').on('click', layout);

    // --------------------------------------------------------------------------------------------
    // Side panels

    function list(text) {
        return $.grep($.map(String(text || '').split(','), $.trim), function (s) { return s !== ''; });
    }

    /** JSON typed into a field, or undefined after marking the field as refused. */
    function jsonField($field, fallback) {
        var text = $.trim($field.val());
        var $group = $field.closest('.form-group');
        $group.removeClass('has-error').find('.help-block.error').remove();
        if (!text) {
            return fallback;
        }
        try {
            return JSON.parse(text);
        } catch (e) {
            $group.addClass('has-error').append($('<span class="help-block error"></span>')
                .text(XJ.t('workflow_field_not_json', { field: $group.find('label').text(), reason: e.message })));
            return undefined;
        }
    }

    /** Marks a name field whose name another node has; the node keeps its name. */
    function refuseName($field, name) {
        var $group = $field.closest('.form-group, td');
        $group.addClass('has-error').find('.help-block.error').remove();
        $group.append($('<span class="help-block error"></span>').text(XJ.t('workflow_name_taken', { name: name })));
    }

    var $nodeForm = $('#wfNodeForm');
    var panelNode = null;

    function showNode(node) {
        panelNode = node;
        $('#wfNodeNone').prop('hidden', !!node);
        $nodeForm.prop('hidden', !node);
        if (!node) {
            return;
        }
        $('#wfNodeLink').tab('show');
        var kind = node.kind;
        var f = function (name) { return $nodeForm.find('[name="' + name + '"]'); };
        f('name').val(node.name);
        f('kind').val(kind.type);
        f('jobId').val(kind.type === 'job' ? String(kind.jobId) : '');
        f('param').val(kind.param || '');
        f('ways').val(kind.type === 'branch' ? JSON.stringify(kind.ways || []) : '');
        f('default').val((kind['default'] || []).join(', '));
        f('workflow').val(kind.workflow || '');
        f('params').val(kind.type === 'subworkflow' ? JSON.stringify(kind.params || {}) : '');
        f('approvers').val((kind.approvers || []).join(', '));
        f('upstream').val(node.upstream.join(', '));
        f('triggerRule').val(node.triggerRule);
        $.each(['count', 'delayMs', 'factor', 'capMs', 'jitter'], function (i, key) {
            f('retry.' + key).val(node.retry[key]);
        });
        f('timeoutSeconds').val(node.timeoutSeconds);
        f('allowFailure').prop('checked', node.allowFailure);
        f('disabled').prop('checked', node.disabled);
        $nodeForm.find('.wf-kind').each(function () {
            $(this).prop('hidden', $(this).attr('data-kind') !== kind.type);
        });
        $nodeForm.find('.has-error').removeClass('has-error').find('.help-block.error').remove();
    }

    /** The kind the panel describes; undefined while one of its JSON fields does not read. */
    function kindFromPanel(type, f) {
        switch (type) {
            case 'job':
                return { type: 'job', jobId: Number(f('jobId').val()) || 0, param: f('param').val() };
            case 'branch':
                var ways = jsonField(f('ways'), []);
                return ways === undefined ? undefined : { type: 'branch', ways: ways, 'default': list(f('default').val()) };
            case 'subworkflow':
                var params = jsonField(f('params'), {});
                return params === undefined ? undefined : { type: 'subworkflow', workflow: f('workflow').val(), params: params };
            default:
                return { type: 'approval', approvers: list(f('approvers').val()) };
        }
    }

    function renameNode(node, name) {
        var old = node.name;
        $.each(state.def.nodes, function (i, other) {
            other.upstream = $.map(other.upstream, function (up) { return up === old ? name : up; });
            if (other.kind.type === 'branch') {
                other.kind['default'] = $.map(other.kind['default'] || [], function (d) { return d === old ? name : d; });
                $.each(other.kind.ways || [], function (k, way) {
                    way.to = $.map(way.to || [], function (d) { return d === old ? name : d; });
                });
            }
        });
        var position = cy.getElementById('n:' + old).position();
        node.name = name;
        cy.getElementById('n:' + old).remove();
        redrawNode(node, position);
    }

    /** Draws one node again with its edges in and out. */
    function redrawNode(node, position) {
        cy.batch(function () {
            var element = cy.getElementById('n:' + node.name);
            if (element.nonempty()) {
                position = element.position();
                element.remove();
            }
            cy.add(nodeElement(node, position));
            cy.add($.grep(edgeElements(), function (edge) {
                return edge.data.source === 'n:' + node.name || edge.data.target === 'n:' + node.name;
            }));
        });
        cy.getElementById('n:' + node.name).select();
    }

    $nodeForm.on('change', 'input, select, textarea', function () {
        var node = panelNode;
        if (!node) {
            return;
        }
        var f = function (name) { return $nodeForm.find('[name="' + name + '"]'); };
        var type = f('kind').val();
        if (type !== node.kind.type) {
            node.kind = kindFromPanel(type, function () { return $(); }) || { type: type };
            if (type === 'job' && state.jobs.length) {
                node.kind.jobId = state.jobs[0].id;
            }
            restyle(node);
            showNode(node);
            changed();
            return;
        }
        var kind = kindFromPanel(type, f);
        if (kind === undefined) {
            return;
        }
        node.kind = kind;
        node.triggerRule = f('triggerRule').val();
        $.each(['count', 'delayMs', 'factor', 'capMs', 'jitter'], function (i, key) {
            node.retry[key] = Number(f('retry.' + key).val()) || 0;
        });
        node.timeoutSeconds = Number(f('timeoutSeconds').val()) || 0;
        node.allowFailure = f('allowFailure').is(':checked');
        node.disabled = f('disabled').is(':checked');
        var upstream = list(f('upstream').val());
        var name = $.trim(f('name').val());
        var upstreamChanged = upstream.join(',') !== node.upstream.join(',');
        node.upstream = upstream;
        if (name && name !== node.name && nodeNamed(name)) {
            redrawNode(node);
            refuseName(f('name'), name);
        } else if (name && name !== node.name) {
            renameNode(node, name);
        } else if (upstreamChanged) {
            redrawNode(node);
        } else {
            restyle(node);
        }
        changed();
    });

    $('#wfNodeRemove').on('click', function () {
        if (panelNode) {
            removeNode(panelNode.name);
            showNode(null);
            changed();
        }
    });

    var $settings = $('#wfSettingsForm');

    function showSettings() {
        var def = state.def;
        var f = function (name) { return $settings.find('[name="' + name + '"]'); };
        var groups = '';
        $.each(window.WORKFLOW_GROUPS || [], function (i, g) {
            groups += '<option value="' + esc(g.id) + '">' + esc(g.title) + '</option>';
        });
        f('jobGroup').html(groups).val(String(def.jobGroup));
        f('name').val(def.name);
        f('description').val(def.description || '');
        f('schedule.type').val(def.schedule.type);
        f('schedule.conf').val(def.schedule.conf || '');
        f('schedule.misfire').val(def.schedule.misfire || 'DO_NOTHING');
        f('params').val(JSON.stringify(def.params || {}));
        f('concurrency.maxRuns').val(def.concurrency.maxRuns);
        f('concurrency.onLimit').val(def.concurrency.onLimit);
        f('concurrency.maxQueued').val(def.concurrency.maxQueued);
        f('failureStrategy').val(def.failureStrategy);
        f('deadline.seconds').val(def.deadline ? def.deadline.seconds : 0);
        f('deadline.stop').prop('checked', !!(def.deadline && def.deadline.stop));
        f('alarmEmail').val(def.alarmEmail || '');
        $('#wfTitle').text(def.name || '');
    }

    $settings.on('change', 'input, select, textarea', function () {
        var def = state.def;
        var f = function (name) { return $settings.find('[name="' + name + '"]'); };
        var params = jsonField(f('params'), {});
        if (params === undefined) {
            return;
        }
        var group = Number(f('jobGroup').val()) || 0;
        var regroup = group !== def.jobGroup;
        def.name = f('name').val();
        def.jobGroup = group;
        def.description = f('description').val();
        def.schedule = { type: f('schedule.type').val(), misfire: f('schedule.misfire').val() };
        if ($.trim(f('schedule.conf').val())) {
            def.schedule.conf = $.trim(f('schedule.conf').val());
        }
        def.params = params;
        def.concurrency = {
            maxRuns: Number(f('concurrency.maxRuns').val()) || 0,
            onLimit: f('concurrency.onLimit').val(),
            maxQueued: Number(f('concurrency.maxQueued').val()) || 0
        };
        def.failureStrategy = f('failureStrategy').val();
        var seconds = Number(f('deadline.seconds').val()) || 0;
        if (seconds > 0) {
            def.deadline = { seconds: seconds, stop: f('deadline.stop').is(':checked') };
        } else {
            delete def.deadline;
        }
        def.alarmEmail = f('alarmEmail').val();
        if (regroup) {
            loadJobs();
        }
        changed();
    });

    // --------------------------------------------------------------------------------------------
    // The table, JSON and TOML views

    function tableRow(node, index) {
        var kind = node.kind;
        var rules = ['all_success', 'all_done', 'one_success', 'one_failed', 'none_failed'];
        var kinds = ['job', 'branch', 'subworkflow', 'approval'];
        var select = function (field, values, current) {
            return '<select data-field="' + field + '">' + $.map(values, function (v) {
                return '<option' + (v === current ? ' selected' : '') + '>' + esc(v) + '</option>';
            }).join('') + '</select>';
        };
        var input = function (field, value, type) {
            return '<input data-field="' + field + '" type="' + (type || 'text') + '" value="' + esc(value) + '">';
        };
        return '<tr data-index="' + index + '">' +
            '<td>' + input('name', node.name) + '</td>' +
            '<td>' + select('kind', kinds, kind.type) + '</td>' +
            '<td>' + (kind.type === 'job' ? input('jobId', kind.jobId, 'number') : esc(kindText(node))) + '</td>' +
            '<td>' + input('upstream', node.upstream.join(', ')) + '</td>' +
            '<td>' + select('triggerRule', rules, node.triggerRule) + '</td>' +
            '<td>' + input('retry', node.retry.count, 'number') + '</td>' +
            '<td>' + input('timeoutSeconds', node.timeoutSeconds, 'number') + '</td>' +
            '<td><input data-field="allowFailure" type="checkbox"' + (node.allowFailure ? ' checked' : '') + '></td>' +
            '<td><input data-field="disabled" type="checkbox"' + (node.disabled ? ' checked' : '') + '></td></tr>';
    }

    function renderTable() {
        $('#wfTable tbody').html($.map(state.def.nodes, tableRow).join(''));
    }

    $('#wfTable').on('change', 'input, select', function () {
        var $cell = $(this);
        var node = state.def.nodes[Number($cell.closest('tr').attr('data-index'))];
        var field = $cell.attr('data-field');
        var value = $cell.is(':checkbox') ? $cell.is(':checked') : $cell.val();
        switch (field) {
            case 'name':
                if ($.trim(value) !== node.name && nodeNamed($.trim(value))) {
                    refuseName($cell, $.trim(value));
                    return;
                }
                if ($.trim(value)) {
                    renameNode(node, $.trim(value));
                }
                break;
            case 'kind':
                node.kind = { job: { type: 'job', jobId: state.jobs.length ? state.jobs[0].id : 0, param: '' },
                    branch: { type: 'branch', ways: [], 'default': [] }, subworkflow: { type: 'subworkflow', workflow: '', params: {} },
                    approval: { type: 'approval', approvers: [] } }[value];
                renderTable();
                break;
            case 'jobId':
                node.kind.jobId = Number(value) || 0;
                break;
            case 'upstream':
                node.upstream = list(value);
                break;
            case 'retry':
                node.retry.count = Number(value) || 0;
                break;
            case 'timeoutSeconds':
                node.timeoutSeconds = Number(value) || 0;
                break;
            default:
                node[field] = value;
        }
        redraw();
        changed();
    });

    /** Replaces the whole definition (from a text, a version or the server) and draws it. */
    function replaceDefinition(def) {
        state.def = def;
        $.each(def.nodes || (def.nodes = []), function (i, node) {
            normalised(node);
        });
        def.schedule = def.schedule || { type: 'NONE' };
        def.concurrency = def.concurrency || { maxRuns: 1, onLimit: 'queue', maxQueued: 100 };
        def.params = def.params || {};
        showSettings();
        showNode(null);
        redraw();
    }

    function textRefused(reason) {
        XJ.alertError(XJ.t('workflow_text_unreadable', { reason: reason }));
    }

    $('#wfJsonLink').on('shown.bs.tab', function () {
        $('#wfJsonText').val(JSON.stringify(state.def, null, 2));
    });
    $('#wfTableLink').on('shown.bs.tab', renderTable);
    $('#wfJsonApply').on('click', function () {
        var def;
        try {
            def = JSON.parse($('#wfJsonText').val());
        } catch (e) {
            textRefused(e.message);
            return;
        }
        if (!def || typeof def !== 'object' || $.isArray(def)) {
            textRefused(I18n.workflow_params_invalid);
            return;
        }
        var regroup = def.jobGroup !== state.def.jobGroup;
        replaceDefinition(def);
        if (regroup) {
            loadJobs();
        }
        changed();
    });
    $('#wfTomlLink').on('shown.bs.tab', function () {
        $('#wfTomlText').val('');
        XJ.call('/workflow/toToml', { definition: JSON.stringify(state.def) }, {
            success: function (text) {
                $('#wfTomlText').val(text);
            }
        });
    });
    $('#wfTomlApply').on('click', function () {
        XJ.call('/workflow/fromToml', { toml: $('#wfTomlText').val() }, {
            success: function (def) {
                replaceDefinition(def);
                loadJobs();
                changed();
            },
            error: textRefused
        });
    });

    // --------------------------------------------------------------------------------------------
    // Validation

    var validationTimer = null;

    function scheduleValidation() {
        window.clearTimeout(validationTimer);
        validationTimer = window.setTimeout(validate, VALIDATE_DELAY_MS);
    }

    function validate() {
        var sent = JSON.stringify(state.def);
        XJ.call('/workflow/validate', { id: state.id || '', definition: sent }, {
            success: function (problems) {
                if (JSON.stringify(state.def) === sent) {
                    showProblems(problems || []);
                }
            },
            error: function (msg) {
                showProblems([{ node: null, field: '', message: msg }]);
            }
        });
    }

    function showProblems(problems) {
        state.validation = problems;
        $('#wfProblemsTitle').text(problems.length ? XJ.t('workflow_problems', { count: problems.length }) : I18n.workflow_valid);
        $('#wfProblems').html($.map(problems, function (p, i) {
            return '<li data-problem="' + i + '">' + (p.node ? '<b>' + esc(p.node) + '</b> ' : '') +
                (p.field ? '<code>' + esc(p.field) + '</code> ' : '') + esc(p.message) + '</li>';
        }).join(''));
        markProblems();
    }

    /** Marks the nodes with a problem, and a cycle's nodes and edges. */
    function markProblems() {
        var problems = state.validation || [];
        cy.batch(function () {
            cy.elements('.bad, .cycle').removeClass('bad cycle');
            $.each(problems, function (i, p) {
                if (p.node) {
                    cy.getElementById('n:' + p.node).addClass('bad');
                }
                var cycle = p.cycle || [];
                for (var k = 0; k + 1 < cycle.length; k++) {
                    cy.getElementById('n:' + cycle[k]).addClass('cycle');
                    cy.getElementById('e:' + cycle[k] + '>' + cycle[k + 1]).addClass('cycle');
                }
            });
        });
    }

    $('#wfProblems').on('click', 'li', function () {
        var problem = (state.validation || [])[Number($(this).attr('data-problem'))];
        var element = problem && problem.node ? cy.getElementById('n:' + problem.node) : null;
        if (element && element.nonempty()) {
            $('#wfViews a[data-view="graph"]').tab('show');
            cy.$(':selected').unselect();
            element.select();
            cy.center(element);
        } else if (problem) {
            $('#wfSettingsLink').tab('show');
        }
    });

    // --------------------------------------------------------------------------------------------
    // Saving and versions

    function setSaved(id, version) {
        state.id = id;
        state.version = version;
        state.dirty = false;
        $('#wfDirty').hide();
        $('#wfRuns').attr('href', XJ.url('/workflow/runs?workflowId=' + encodeURIComponent(id))).parent().show();
        if (window.history && window.history.replaceState) {
            window.history.replaceState(null, '', XJ.url('/workflow/edit?id=' + encodeURIComponent(id)));
        }
        loadVersions();
    }

    $('#wfSave').on('click', function () {
        var $button = $(this).prop('disabled', true);
        var data = { id: state.id || '', baseVersion: state.version || '', definition: JSON.stringify(state.def) };
        XJ.request('/workflow/save', data).then(function (answer) {
            if (answer && answer.code === 200) {
                var saved = answer.content;
                XJ.toast(XJ.t(saved.changed ? 'workflow_saved' : 'workflow_unchanged', { version: saved.version }), true);
                setSaved(saved.id, saved.version);
            } else if (answer && $.isArray(answer.content)) {
                showProblems(answer.content);
                XJ.alertError(XJ.t('workflow_problems', { count: answer.content.length }));
            } else {
                XJ.alertError((answer && answer.msg) || I18n.system_opt_fail);
            }
        }, function (msg) {
            if (msg !== null) {
                XJ.alertError(msg);
            }
        }).always(function () {
            $button.prop('disabled', false);
        });
    });

    function loadVersions() {
        if (!state.id) {
            return;
        }
        XJ.call('/workflow/versions', { id: state.id }, {
            success: function (versions) {
                $('#wfVersionsNone').prop('hidden', true);
                $('#wfVersionsBody').prop('hidden', false);
                var rows = '';
                var options = '';
                $.each(versions, function (i, v) {
                    rows += '<tr data-version="' + esc(v.version) + '"><td>' + esc(v.version) +
                        (v.current ? ' <small class="label label-success">' + esc(I18n.workflow_current) + '</small>' : '') +
                        '</td><td>' + esc(v.author || '') + '</td><td>' + esc(XJ.formatDate(new Date(v.addTime).toISOString())) +
                        '</td><td>' + (v.current ? '' : '<button type="button" class="btn btn-default btn-xs wf-restore" data-version="' +
                        esc(v.version) + '">' + esc(I18n.workflow_restore) + '</button>') + '</td></tr>';
                    options += '<option value="' + esc(v.version) + '">' + esc(v.version) + '</option>';
                });
                $('#wfVersions tbody').html(rows);
                $('#wfDiffFrom').html(options).val(String(versions.length > 1 ? versions[1].version : versions[0].version));
                $('#wfDiffTo').html(options).val(String(versions[0].version));
            }
        });
    }

    function diffHtml(answer) {
        var field = function (change) {
            return '<li><code>' + esc(change.field) + '</code><pre><del>' + esc(JSON.stringify(change.old)) +
                '</del>\n<ins>' + esc(JSON.stringify(change['new'])) + '</ins></pre></li>';
        };
        var html = '<div class="wf-diff">';
        var none = !answer.fields.length && !answer.nodes.added.length && !answer.nodes.removed.length && !answer.nodes.changed.length;
        if (none) {
            return html + '<p class="text-muted">' + esc(I18n.workflow_diff_none) + '</p></div>';
        }
        if (answer.fields.length) {
            html += '<h5>' + esc(I18n.workflow_diff_fields) + '</h5><ul>' + $.map(answer.fields, field).join('') + '</ul>';
        }
        var section = function (title, nodes, mark) {
            if (!nodes.length) {
                return '';
            }
            return '<h5>' + esc(title) + '</h5><ul>' + $.map(nodes, function (node) {
                return '<li><' + mark + '>' + esc(node.name) + '</' + mark + '></li>';
            }).join('') + '</ul>';
        };
        html += section(I18n.workflow_diff_added, answer.nodes.added, 'ins');
        html += section(I18n.workflow_diff_removed, answer.nodes.removed, 'del');
        if (answer.nodes.changed.length) {
            html += '<h5>' + esc(I18n.workflow_diff_changed) + '</h5><ul>' + $.map(answer.nodes.changed, function (node) {
                return '<li><b>' + esc(node.node) + '</b><ul>' + $.map(node.fields, field).join('') + '</ul></li>';
            }).join('') + '</ul>';
        }
        return html + '</div>';
    }

    $('#wfDiff').on('click', function () {
        XJ.call('/workflow/diff', { id: state.id, from: $('#wfDiffFrom').val(), to: $('#wfDiffTo').val() }, {
            success: function (answer) {
                XJ.showHtml(XJ.t('workflow_diff_title', { from: answer.from, to: answer.to }), diffHtml(answer));
            }
        });
    });

    $('#wfVersions').on('click', '.wf-restore', function () {
        var version = $(this).attr('data-version');
        XJ.confirm(XJ.t('workflow_restore_confirm', { version: version }), function () {
            XJ.call('/workflow/restore', { id: state.id, version: version }, {
                success: function (saved) {
                    XJ.toast(XJ.t('workflow_saved', { version: saved.version }), true);
                    load(state.id);
                }
            });
        });
    });

    // --------------------------------------------------------------------------------------------
    // Start

    function load(id) {
        XJ.call('/workflow/load', { id: id }, {
            success: function (loaded) {
                cy.elements().remove();
                replaceDefinition(loaded.definition);
                setSaved(loaded.id, loaded.currentVersion);
                loadJobs();
                scheduleValidation();
            }
        });
    }

    XJ.workflowEditor = { cy: cy, state: state, connect: connect };
    if (state.id) {
        load(state.id);
    } else {
        replaceDefinition(freshDefinition());
        $('#wfSettingsLink').tab('show');
        loadJobs();
        scheduleValidation();
    }
}(jQuery, window.cytoscape));
