/*
 * The workflow list (templates/workflow.html): filters, schedule start and stop, run now with JSON
 * parameters, copy and delete. Every text from the server is escaped before it becomes markup.
 */
(function ($) {
    'use strict';

    var esc = XJ.escapeHtml;
    var rows = {};

    function when(ms) {
        return ms ? XJ.formatDate(new Date(ms).toISOString()) : '';
    }

    function stateLabel(state) {
        var style = {
            succeeded: 'label-success', failed: 'label-danger', running: 'label-primary', queued: 'label-default',
            paused: 'label-warning', stopping: 'label-warning', stopped: 'label-default', discarded: 'label-default'
        }[state] || 'label-default';
        return '<span class="label ' + style + '">' + esc(I18n['wfrun_run_state_' + state] || state) + '</span>';
    }

    function opsMenu(row) {
        var items = [];
        var item = function (cls, icon, text, href) {
            items.push('<li><a class="' + cls + '" data-id="' + esc(row.id) + '" href="' + esc(href || '#') + '">' +
                '<i class="fa fa-fw ' + icon + '"></i> ' + esc(text) + '</a></li>');
        };
        item('wf-op-run', 'fa-play-circle-o', I18n.workflow_opt_run);
        item('wf-op-runs', 'fa-list', I18n.workflow_opt_runs, XJ.url('/workflow/runs?workflowId=' + encodeURIComponent(row.id)));
        item('wf-op-edit', 'fa-edit', I18n.system_opt_edit, XJ.url('/workflow/edit?id=' + encodeURIComponent(row.id)));
        items.push('<li role="separator" class="divider"></li>');
        if (row.triggerStatus === 1) {
            item('wf-op-stop', 'fa-pause', I18n.jobinfo_opt_stop);
        } else {
            item('wf-op-start', 'fa-play', I18n.jobinfo_opt_start);
        }
        item('wf-op-copy', 'fa-copy', I18n.system_opt_copy);
        item('wf-op-remove', 'fa-trash-o', I18n.system_opt_del);
        return '<div class="btn-group">' +
            '<button type="button" class="btn btn-primary btn-sm dropdown-toggle wf-op-toggle" data-toggle="dropdown" aria-haspopup="true" aria-expanded="false">' +
            esc(I18n.system_opt) + ' <span class="caret"></span></button>' +
            '<ul class="dropdown-menu dropdown-menu-right">' + items.join('') + '</ul></div>';
    }

    var table = XJ.dataTable('#workflow_list', {
        url: '/workflow/pageList',
        params: function () {
            return {
                jobGroup: $('#jobGroup').val(),
                lastState: $('#lastState').val(),
                name: $('#workflowNameFilter').val()
            };
        },
        columns: [
            { data: 'id', className: 'xj-nowrap', width: '6%', render: XJ.renderText },
            {
                data: 'name',
                width: '24%',
                render: function (data, type, row) {
                    rows[row.id] = row;
                    return '<a class="wf-name" href="' + esc(XJ.url('/workflow/edit?id=' + encodeURIComponent(row.id))) + '">' + esc(data) + '</a>';
                }
            },
            {
                data: 'scheduleType',
                width: '16%',
                render: function (data, type, row) {
                    return esc(data + (row.scheduleConf ? ': ' + row.scheduleConf : ''));
                }
            },
            {
                data: 'triggerNextTime',
                width: '14%',
                render: function (data, type, row) {
                    return row.triggerStatus === 1 ? esc(when(data)) : '';
                }
            },
            {
                data: 'lastRun',
                width: '18%',
                render: function (run) {
                    if (!run) {
                        return '<span class="text-muted">' + esc(I18n.workflow_last_none) + '</span>';
                    }
                    return '<a class="wf-last-run" href="' + esc(XJ.url('/workflow/run?id=' + encodeURIComponent(run.id))) + '">' +
                        stateLabel(run.state) + '</a> <small class="text-muted">#' + esc(run.id) + ' ' + esc(when(run.addTime)) + '</small>';
                }
            },
            { data: 'currentVersion', className: 'xj-nowrap', width: '6%', render: XJ.renderText },
            {
                data: 'triggerStatus',
                className: 'xj-nowrap',
                width: '8%',
                render: function (data) {
                    return data === 1
                        ? '<small class="label label-success">RUNNING</small>'
                        : '<small class="label label-default">STOP</small>';
                }
            },
            {
                data: null,
                className: 'xj-nowrap',
                width: '8%',
                render: function (data, type, row) {
                    return opsMenu(row);
                }
            }
        ]
    });

    function reload() {
        table.ajax.reload(null, false);
    }

    $('#searchBtn').on('click', function () {
        table.ajax.reload();
    });
    $('#jobGroup, #lastState').on('change', function () {
        table.ajax.reload();
    });

    function rowOf(link) {
        return rows[$(link).attr('data-id')] || {};
    }

    var $list = $('#workflow_list');

    function confirmed(link, path, key) {
        var row = rowOf(link);
        XJ.confirm(XJ.t(key, { name: row.name }), function () {
            XJ.call(path, { id: row.id }, {
                success: function () {
                    XJ.toast(I18n.system_opt_suc, true);
                    reload();
                }
            });
        });
    }

    $list.on('click', '.wf-op-start', function (e) {
        e.preventDefault();
        confirmed(this, '/workflow/start', 'workflow_start_confirm');
    });
    $list.on('click', '.wf-op-stop', function (e) {
        e.preventDefault();
        confirmed(this, '/workflow/stop', 'workflow_stop_confirm');
    });
    $list.on('click', '.wf-op-remove', function (e) {
        e.preventDefault();
        confirmed(this, '/workflow/remove', 'workflow_del_confirm');
    });

    $list.on('click', '.wf-op-run', function (e) {
        e.preventDefault();
        var row = rowOf(this);
        var $form = $('#runForm');
        XJ.showModal($('#runModal'), $form);
        $form.find('[name="id"]').val(row.id);
        $('#runWorkflowName').text(row.name || '');
    });

    /** The parameters typed, if they are empty or a JSON object; otherwise null. */
    function runParams(text) {
        if (!$.trim(text)) {
            return {};
        }
        try {
            var value = JSON.parse(text);
            return value && typeof value === 'object' && !$.isArray(value) ? value : null;
        } catch (ignored) {
            return null;
        }
    }

    $('#runForm').on('submit', function (e) {
        e.preventDefault();
        var $form = $(this);
        var text = $form.find('[name="params"]').val();
        var $group = $form.find('[name="params"]').closest('.form-group');
        $group.find('.help-block.error').remove();
        if (runParams(text) === null) {
            $group.addClass('has-error').find('.col-sm-9').append(
                $('<span class="help-block error"></span>').text(I18n.workflow_params_invalid));
            return;
        }
        $group.removeClass('has-error');
        var $button = $('#runSubmit').prop('disabled', true);
        XJ.call('/workflow/trigger', { id: $form.find('[name="id"]').val(), params: text }, {
            success: function (started) {
                $('#runModal').modal('hide');
                XJ.toast(XJ.t('workflow_run_started', { id: started.runId, state: started.state }), true);
                reload();
            }
        }).always(function () {
            $button.prop('disabled', false);
        });
    });

    $list.on('click', '.wf-op-copy', function (e) {
        e.preventDefault();
        var row = rowOf(this);
        var $form = $('#copyForm');
        XJ.showModal($('#copyModal'), $form);
        $form.find('[name="id"]').val(row.id);
        $form.find('[name="name"]').val((row.name || '') + '-copy');
    });

    $('#copyForm').on('submit', function (e) {
        e.preventDefault();
        var $form = $(this);
        var $button = $('#copySubmit').prop('disabled', true);
        XJ.call('/workflow/copy', { id: $form.find('[name="id"]').val(), name: $form.find('[name="name"]').val() }, {
            success: function () {
                $('#copyModal').modal('hide');
                XJ.toast(I18n.system_add_suc, true);
                reload();
            }
        }).always(function () {
            $button.prop('disabled', false);
        });
    });
}(jQuery));
