/* Workflow runs: filters, the list with links to each run's view, and backfills with their progress. */
$(function () {
    'use strict';

    var esc = escapeHtml;
    var FORMAT = 'YYYY-MM-DD HH:mm:ss';
    var POLL_MS = 2000;
    var $page = $('#workflowRunsPage');
    var $workflow = $('#workflowId');
    var RUN_LABELS = {
        queued: 'label-default', running: 'label-primary', paused: 'label-warning', stopping: 'label-warning',
        succeeded: 'label-success', failed: 'label-danger', stopped: 'label-default', discarded: 'label-default'
    };

    function t(prefix, value) {
        var text = I18n[prefix + value];
        return text === undefined ? value : text;
    }

    function when(ms) {
        return ms ? moment(ms).format(FORMAT) : '';
    }

    /** The epoch ms of a "from - to" range input, or {} when it is empty. */
    function range($input) {
        var parts = String($input.val() || '').split(' - ');
        if (parts.length !== 2) {
            return {};
        }
        return { from: moment(parts[0], FORMAT).valueOf(), to: moment(parts[1], FORMAT).valueOf() };
    }

    // --------------------------------------------------------------------------------------------
    // List

    var $filterTime = $('#filterTime');
    XJ.dateRangePicker($filterTime, {
        start: moment().subtract(1, 'weeks').startOf('day'),
        end: moment().endOf('day'),
        onApply: function () {
            setTimeout(function () { table.draw(); }, 0);
        }
    });
    // No time filter until one is picked.
    $filterTime.val('');
    $('#filterTimeClear').on('click', function () {
        $filterTime.val('');
        table.draw();
    });

    var table = XJ.dataTable('#run_list', {
        url: '/workflowrun/pageList',
        params: function () {
            return $.extend({
                workflowId: $workflow.val() || 0,
                state: $('#runState').val(),
                triggerType: $('#triggerType').val()
            }, range($filterTime));
        },
        columns: [
            {
                data: 'id',
                className: 'xj-nowrap',
                render: function (data) {
                    return '<a class="run-link" href="' + esc(XJ.url('/workflow/run?id=' + encodeURIComponent(data))) + '">#' + esc(data) + '</a>';
                }
            },
            { data: 'workflowName', render: XJ.renderText },
            {
                data: 'state',
                className: 'xj-nowrap',
                render: function (data) {
                    return '<span class="label ' + (RUN_LABELS[data] || 'label-default') + '">' + esc(t('wfrun_run_state_', data)) + '</span>';
                }
            },
            {
                data: 'triggerType',
                className: 'xj-nowrap',
                render: function (data, type, row) {
                    var text = esc(t('wfrun_trigger_', data));
                    if (row.backfillId) {
                        text += ' <a href="#" class="backfill-link" data-backfill="' + esc(row.backfillId) + '">#' + esc(row.backfillId) + '</a>';
                    }
                    return text;
                }
            },
            { data: 'logicalTime', className: 'xj-nowrap', render: function (data) { return esc(when(data)); } },
            { data: 'startTime', className: 'xj-nowrap', render: function (data) { return esc(when(data)); } },
            { data: 'endTime', className: 'xj-nowrap', render: function (data) { return esc(when(data)); } },
            { data: 'startedBy', render: XJ.renderText }
        ]
    });

    $('#searchBtn').on('click', function () { table.draw(); });
    $('#runState, #triggerType, #workflowId').on('change', function () { table.draw(); });
    $('#run_list').on('click', '.backfill-link', function (e) {
        e.preventDefault();
        watchBackfill($(this).attr('data-backfill'));
    });

    // --------------------------------------------------------------------------------------------
    // Backfill

    var backfillTimer = null;
    var backfillId = null;

    function watchBackfill(id) {
        clearTimeout(backfillTimer);
        backfillId = id;
        $('#backfillBox').show();
        $('#backfillId').text('#' + id);
        XJ.call('/workflowrun/backfillInfo', { id: id }, {
            method: 'GET',
            success: function (b) {
                if (backfillId !== id) {
                    return;
                }
                var counts = b.runs || {};
                var done = 0;
                ['succeeded', 'failed', 'stopped', 'discarded'].forEach(function (s) { done += counts[s] || 0; });
                $('#backfillBar').css('width', (b.total ? Math.round(done * 100 / b.total) : 100) + '%');
                var parts = [t('wfrun_backfill_state_', b.state) + ': ' + done + ' / ' + b.total];
                Object.keys(counts).sort().forEach(function (s) { parts.push(t('wfrun_run_state_', s) + ' ' + counts[s]); });
                parts.push(when(b.from) + ' – ' + when(b.to));
                $('#backfillCounts').text(parts.join(' · '));
                $page.attr('data-backfill-state', b.state);
                $('#backfillStop').prop('disabled', b.state !== 'running');
                if (b.state === 'running') {
                    backfillTimer = setTimeout(function () { watchBackfill(id); }, POLL_MS);
                }
                table.draw(false);
            }
        });
    }

    $('#backfillStop').on('click', function () {
        var id = backfillId;
        XJ.confirm(I18n.wfrun_confirm_backfill_stop, function () {
            XJ.call('/workflowrun/backfillStop', { id: id }, {
                success: function () {
                    XJ.toast(I18n.system_opt_suc, true);
                    watchBackfill(id);
                }
            });
        });
    });

    var $form = $('#backfillForm');
    var $backfillRange = $('#backfillRange');
    XJ.dateRangePicker($backfillRange, {
        start: moment().subtract(1, 'weeks').startOf('day'),
        end: moment().endOf('day'),
        opens: 'right'
    });

    $('#backfillBtn').on('click', function () {
        if (!$workflow.val() || $workflow.val() === '0') {
            XJ.alert(I18n.wfrun_backfill_pick_workflow);
            return;
        }
        var keep = $backfillRange.val();
        XJ.showModal($('#backfillModal'), $form);
        $backfillRange.val(keep);
        $('#backfillWorkflowName').text($workflow.find('option:selected').text());
    });

    $form.on('submit', function (e) {
        e.preventDefault();
        var span = range($backfillRange);
        var $button = $('#backfillSubmit').prop('disabled', true);
        XJ.call('/workflowrun/backfill', {
            workflowId: $workflow.val(),
            from: span.from,
            to: span.to,
            parallel: $('#backfillParallel').val(),
            params: $('#backfillParams').val()
        }, {
            success: function (started) {
                $('#backfillModal').modal('hide');
                XJ.toast(XJ.t('wfrun_backfill_started', { runs: started.runs }), true);
                watchBackfill(String(started.id));
            }
        }).always(function () {
            $button.prop('disabled', false);
        });
    });

    if ($page.attr('data-backfill') && $page.attr('data-backfill') !== '0') {
        watchBackfill($page.attr('data-backfill'));
    }
});
