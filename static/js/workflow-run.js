/*
 * A workflow run: its graph coloured by node state, polled while the run goes (one small JSON answer,
 * node classes swapped in one batch, no reload), a timeline of the node attempts drawn on a canvas, a
 * side panel with the picked node's attempts, and the engine's operations, each confirmed first.
 */
$(function () {
    'use strict';

    var $page = $('#workflowRunPage');
    var runId = $page.attr('data-run-id');
    var nodes = JSON.parse($('#runGraphData').text() || '[]');
    var FORMAT = 'YYYY-MM-DD HH:mm:ss';
    var POLL_MS = 1500;
    var NODE_STATES = ['pending', 'queued', 'running', 'waiting_retry', 'waiting_approval', 'succeeded',
        'failed', 'skipped', 'upstream_failed', 'stopped'];
    var OVER = ['succeeded', 'failed', 'stopped', 'discarded'];
    var RUN_LABELS = {
        queued: 'label-default', running: 'label-primary', paused: 'label-warning', stopping: 'label-warning',
        succeeded: 'label-success', failed: 'label-danger', stopped: 'label-default', discarded: 'label-default'
    };
    var SHAPES = { job: 'round-rectangle', branch: 'diamond', subworkflow: 'barrel', approval: 'hexagon' };

    function t(prefix, value) {
        var text = I18n[prefix + value];
        return text === undefined ? value : text;
    }

    function when(ms) {
        return ms ? moment(ms).format(FORMAT) : '';
    }

    // --------------------------------------------------------------------------------------------
    // Graph

    var byName = {};
    var edges = [];
    nodes.forEach(function (n) {
        byName[n.name] = n;
        (n.upstream || []).forEach(function (up) {
            edges.push({ source: up, target: n.name });
        });
    });
    var view = XJ.dagView($('#runGraph')[0], {
        nodes: nodes.map(function (n) {
            return { id: n.name, label: n.name, state: 'pending', shape: SHAPES[n.kind], disabled: n.disabled };
        }),
        edges: edges,
        states: NODE_STATES,
        direction: nodes.length > 60 ? 'TB' : 'LR',
        onSelect: pick
    });
    XJ.runView = view;
    XJ.dagLegend($('#runLegend'), NODE_STATES, function (s) { return t('wfrun_state_', s); });
    $('#graphFit').on('click', function () { view.fit(); });

    // --------------------------------------------------------------------------------------------
    // Progress

    var latest = {};
    var attempts = [];
    var run = null;
    var timer = null;
    var selected = null;

    function poll() {
        clearTimeout(timer);
        timer = null;
        XJ.call('/workflowrun/progress', { id: runId }, {
            method: 'GET',
            success: function (content) {
                show(content);
                if (OVER.indexOf(content.run.state) < 0) {
                    timer = setTimeout(poll, POLL_MS);
                }
            },
            error: function (msg) {
                XJ.toast(msg, false);
                timer = setTimeout(poll, POLL_MS * 4);
            }
        });
    }

    function show(content) {
        var before = selected ? latest[selected] : null;
        run = content.run;
        attempts = content.attempts;
        latest = {};
        nodes.forEach(function (n) { latest[n.name] = 'pending'; });
        // Ordered by node and attempt: the last one of a node is its state.
        attempts.forEach(function (a) { latest[a.node] = a.state; });
        view.setStates(latest);
        $page.attr('data-run-state', run.state);
        $('#runState').attr('class', 'label ' + (RUN_LABELS[run.state] || 'label-default')).text(t('wfrun_run_state_', run.state));
        var times = [I18n.wfrun_logical_time + ' ' + when(run.logicalTime)];
        if (run.startTime) { times.push(I18n.wfrun_started + ' ' + when(run.startTime)); }
        if (run.endTime) { times.push(I18n.wfrun_ended + ' ' + when(run.endTime)); }
        var $times = $('#runTimes').empty();
        times.forEach(function (text) {
            $('<span class="xj-nowrap">').text(text).appendTo($times);
        });
        // A sub-workflow's run leads back to the run whose node started it.
        if (run.parentRunId) {
            $('#runParent').attr('href', XJ.url('/workflow/run?id=' + encodeURIComponent(run.parentRunId))).show()
                .find('span').text('#' + run.parentRunId + (run.parentNode ? ' · ' + run.parentNode : ''));
        }
        $('#runMessage').text(run.message || '').toggle(!!run.message)
            .attr('class', 'alert xj-run-message ' + (run.state === 'failed' ? 'alert-danger' : 'alert-info'));
        var going = OVER.indexOf(run.state) < 0;
        var anyFailed = Object.keys(latest).some(function (k) {
            return ['failed', 'upstream_failed', 'stopped'].indexOf(latest[k]) >= 0;
        });
        $('#runStop').prop('disabled', !going || run.state === 'stopping');
        $('#runPause').prop('disabled', run.state !== 'running');
        $('#runResume').prop('disabled', run.state !== 'paused');
        $('#runRetryFailed').prop('disabled', !anyFailed || run.state === 'stopping');
        drawTimeline();
        if (selected && latest[selected] !== before) {
            loadNode(selected);
        } else if (selected) {
            nodeButtons(latest[selected]);
        }
    }

    // --------------------------------------------------------------------------------------------
    // Timeline: one row per node that has attempts, one bar per attempt, on a canvas.

    var ROW = 20;
    var LABEL_W = 170;
    var AXIS_H = 22;

    function drawTimeline() {
        var canvas = $('#runTimeline')[0];
        var rows = nodes.filter(function (n) { return latest[n.name] !== 'pending'; });
        $('#timelineEmpty').toggle(rows.length === 0);
        $(canvas).toggle(rows.length > 0);
        if (!rows.length) {
            return;
        }
        var now = Date.now();
        var start = Infinity;
        var end = 0;
        attempts.forEach(function (a) {
            var from = a.sendTime || a.readyTime;
            if (from) {
                start = Math.min(start, from);
                end = Math.max(end, a.endTime || now);
            }
        });
        if (!isFinite(start)) {
            start = run && run.startTime ? run.startTime : now;
        }
        end = Math.max(end, start + 1000);
        var width = $(canvas).parent()[0].clientWidth || 800;
        var height = AXIS_H + rows.length * ROW + 4;
        var ratio = window.devicePixelRatio || 1;
        canvas.width = width * ratio;
        canvas.height = height * ratio;
        canvas.style.width = width + 'px';
        canvas.style.height = height + 'px';
        var g = canvas.getContext('2d');
        g.setTransform(ratio, 0, 0, ratio, 0, 0);
        g.clearRect(0, 0, width, height);
        g.font = '11px sans-serif';
        var span = width - LABEL_W - 10;
        var x = function (ms) { return LABEL_W + (ms - start) / (end - start) * span; };
        g.fillStyle = '#777';
        g.strokeStyle = '#eee';
        for (var i = 0; i <= 4; i++) {
            var ms = start + (end - start) * i / 4;
            var px = x(ms);
            g.beginPath();
            g.moveTo(px, AXIS_H - 4);
            g.lineTo(px, height);
            g.stroke();
            g.textAlign = i === 4 ? 'right' : (i === 0 ? 'left' : 'center');
            g.fillText(moment(ms).format('HH:mm:ss'), px, 12);
        }
        var rowOf = {};
        rows.forEach(function (n, r) {
            rowOf[n.name] = r;
            var y = AXIS_H + r * ROW;
            g.fillStyle = '#333';
            g.textAlign = 'left';
            g.fillText(n.name.length > 24 ? n.name.slice(0, 23) + '…' : n.name, 4, y + 14);
        });
        attempts.forEach(function (a) {
            var from = a.sendTime || a.readyTime;
            if (!from || rowOf[a.node] === undefined) {
                return;
            }
            var y = AXIS_H + rowOf[a.node] * ROW + 3;
            var left = x(from);
            var w = Math.max(3, x(a.endTime || now) - left);
            g.fillStyle = XJ.dagColours[a.state] || '#999';
            g.fillRect(left, y, w, ROW - 6);
        });
    }

    $(window).on('resize', drawTimeline);

    // --------------------------------------------------------------------------------------------
    // The picked node

    function pick(name) {
        selected = name;
        view.select(name);
        var node = byName[name];
        $('#nodeTitle').text(name);
        $('#nodeHint').hide();
        $('#nodeBody').show();
        $('#nodeKind').text(t('wfrun_kind_', node.kind) + (node.jobId ? ' · ' + I18n.jobinfo_field_id + ' ' + node.jobId : ''));
        var approval = node.kind === 'approval';
        $('#nodeOps [data-op=approve], #nodeOps [data-op=reject]').toggle(approval);
        loadNode(name);
    }

    function field($dl, label, value, pre) {
        if (value === null || value === undefined || value === '') {
            return;
        }
        $('<dt>').text(label).appendTo($dl);
        var $dd = $('<dd>').appendTo($dl);
        if (pre) {
            $('<pre class="xj-attempt-pre">').text(value).appendTo($dd);
        } else {
            $dd.text(value);
        }
    }

    var NODE_OVER = ['succeeded', 'failed', 'skipped', 'upstream_failed', 'stopped'];

    /** Enables what the engine would take for this node now; the server still decides. */
    function nodeButtons(state) {
        var runState = run ? run.state : 'running';
        var held = runState === 'stopping' || runState === 'queued';
        var enable = {
            rerun: !held && state !== 'running' && state !== 'queued',
            'mark-succeeded': !held,
            'mark-failed': !held,
            skip: OVER.indexOf(runState) < 0 && NODE_OVER.indexOf(state) < 0 && state !== 'running',
            approve: state === 'waiting_approval',
            reject: state === 'waiting_approval'
        };
        $('#nodeOps button').each(function () {
            $(this).prop('disabled', !enable[$(this).attr('data-op')]);
        });
    }

    function loadNode(name) {
        var state = latest[name] || 'pending';
        nodeButtons(state);
        $('#nodeState').attr('class', 'label').css('background-color', XJ.dagColours[state]).text(t('wfrun_state_', state));
        XJ.call('/workflowrun/node', { id: runId, node: name }, {
            method: 'GET',
            success: function (list) {
                if (selected !== name) {
                    return;
                }
                var $box = $('#nodeAttempts').empty();
                if (!list.length) {
                    $('<p class="text-muted">').text(I18n.wfrun_no_attempts).appendTo($box);
                }
                list.slice().reverse().forEach(function (a) {
                    var $item = $('<div class="xj-attempt">').attr('data-attempt', a.attempt).appendTo($box);
                    $('<strong>').text('#' + a.attempt + ' ').appendTo($item);
                    $('<span class="label">').css('background-color', XJ.dagColours[a.state] || '#999')
                        .text(t('wfrun_state_', a.state)).appendTo($item);
                    var $dl = $('<dl class="dl-horizontal xj-attempt-fields">').appendTo($item);
                    field($dl, I18n.wfrun_ready, when(a.readyTime));
                    field($dl, I18n.wfrun_sent, when(a.sendTime));
                    field($dl, I18n.wfrun_ended, when(a.endTime));
                    field($dl, I18n.wfrun_param, a.param, true);
                    field($dl, I18n.wfrun_output, a.output === null ? null : JSON.stringify(a.output, null, 2), true);
                    field($dl, I18n.wfrun_message, a.message, true);
                    field($dl, I18n.wfrun_acted_by, a.actedBy);
                    (a.logIds || []).forEach(function (logId) {
                        $('<a class="btn btn-xs btn-default xj-attempt-log" target="_blank" rel="noopener">')
                            .attr('href', XJ.url('/joblog/logDetailPage?id=' + encodeURIComponent(logId)))
                            .append($('<i class="fa fa-terminal">'), document.createTextNode(' ' + I18n.joblog_rolling_log + ' ' + logId))
                            .appendTo($item);
                    });
                });
            }
        });
    }

    // --------------------------------------------------------------------------------------------
    // Operations

    function operate(operation, node, output) {
        var data = { id: runId, operation: operation };
        if (node) { data.node = node; }
        if (output !== undefined) { data.output = output; }
        return XJ.call('/workflowrun/operate', data, {
            success: function () {
                XJ.toast(I18n.system_opt_suc, true);
                poll();
            }
        });
    }

    function confirmed(operation, node) {
        var text = t('wfrun_confirm_', operation.replace('-', '_'));
        XJ.confirm(node ? text + ' (' + node + ')' : text, function () {
            operate(operation, node);
        });
    }

    $('#runStop').on('click', function () { confirmed('stop'); });
    $('#runPause').on('click', function () { confirmed('pause'); });
    $('#runResume').on('click', function () { confirmed('resume'); });
    $('#runRetryFailed').on('click', function () { confirmed('retry-failed'); });

    $('#nodeOps').on('click', 'button', function () {
        var op = $(this).attr('data-op');
        if (!selected) {
            return;
        }
        if (op === 'mark-succeeded') {
            XJ.showModal($('#markModal'), $('#markForm'));
            $('#markNodeName').text(selected);
            return;
        }
        confirmed(op, selected);
    });

    $('#markForm').on('submit', function (e) {
        e.preventDefault();
        var $button = $('#markSubmit').prop('disabled', true);
        operate('mark-succeeded', selected, $('#markOutput').val()).always(function () {
            $button.prop('disabled', false);
            $('#markModal').modal('hide');
        });
    });

    poll();
});
