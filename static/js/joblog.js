/* Trigger log: filters, the log table, message details, kill and clean-up. */
$(function () {
    'use strict';

    var esc = escapeHtml;
    var FORMAT = 'YYYY-MM-DD HH:mm:ss';
    var $page = $('#joblogPage');
    var $group = $('#jobGroup');
    var $job = $('#jobId');

    // --------------------------------------------------------------------------------------------
    // Filters

    /** Refills the job select with the jobs of the selected group, keeping `selected` when present. */
    function loadJobs(selected) {
        var group = $group.val();
        var fill = function (jobs) {
            $job.find('option').not('[value="0"]').remove();
            $.each(jobs || [], function (i, job) {
                $('<option>').val(job.id).text(job.jobDesc || String(job.id)).appendTo($job);
            });
            $job.val(selected && $job.find('option[value="' + selected + '"]').length ? String(selected) : '0');
        };
        if (!group || group === '0') {
            fill([]);
            return $.Deferred().resolve().promise();
        }
        return XJ.call('/joblog/getJobsByGroup', { jobGroup: group }, { success: fill });
    }

    $group.on('change', function () {
        loadJobs(null);
    });
    if ($page.attr('data-job-id')) {
        loadJobs($page.attr('data-job-id'));
    }

    XJ.dateRangePicker($('#filterTime'), {
        start: moment().startOf('day'),
        end: moment().endOf('day'),
        recentHour: true,
        onApply: function () {
            // The picker writes the input after this callback.
            setTimeout(function () {
                table.draw();
            }, 0);
        }
    });

    // --------------------------------------------------------------------------------------------
    // Table

    function codeLabel(code, texts) {
        if (code === 0 || code === null || code === undefined) {
            return '';
        }
        if (texts[code]) {
            return '<span class="' + texts[code][0] + '">' + esc(texts[code][1]) + '</span>';
        }
        return esc(code);
    }

    var TRIGGER_CODES = {
        200: ['text-green', I18n.system_success],
        500: ['text-red', I18n.system_fail]
    };
    var HANDLE_CODES = {
        200: ['text-green', I18n.joblog_handleCode_200],
        500: ['text-red', I18n.joblog_handleCode_500],
        502: ['text-red', I18n.joblog_handleCode_502]
    };

    function messageLink(field) {
        return function (data) {
            if (!data) {
                return '<span class="text-muted">' + esc(I18n.system_empty) + '</span>';
            }
            return '<a href="#" class="log-msg" data-field="' + field + '">' + esc(I18n.system_show) + '</a>';
        };
    }

    function opsMenu(row) {
        if (!(row.triggerCode === 200 || row.handleCode !== 0)) {
            return '';
        }
        var items = '<li><a class="log-op-detail" target="_blank" rel="noopener" href="' +
            esc(XJ.url('/joblog/logDetailPage?id=' + encodeURIComponent(row.id))) + '"><i class="fa fa-fw fa-terminal"></i> ' +
            esc(I18n.joblog_rolling_log) + '</a></li>';
        if (row.handleCode === 0) {
            items += '<li role="separator" class="divider"></li><li><a href="#" class="log-op-kill"><i class="fa fa-fw fa-stop-circle-o"></i> ' +
                esc(I18n.joblog_kill_log) + '</a></li>';
        }
        return '<div class="btn-group log-ops">' +
            '<button type="button" class="btn btn-primary btn-sm dropdown-toggle log-op-toggle" data-toggle="dropdown" aria-haspopup="true" aria-expanded="false">' +
            esc(I18n.system_opt) + ' <span class="caret"></span></button>' +
            '<ul class="dropdown-menu dropdown-menu-right">' + items + '</ul></div>';
    }

    var table = XJ.dataTable('#joblog_list', {
        url: '/joblog/pageList',
        params: function () {
            return {
                jobGroup: $group.val() || 0,
                jobId: $job.val() || 0,
                logStatus: $('#logStatus').val(),
                filterTime: $('#filterTime').val()
            };
        },
        columns: [
            {
                data: 'jobId',
                className: 'xj-nowrap',
                render: function (data) {
                    return '<a href="#" class="log-job-info">' + esc(data) + '</a>';
                }
            },
            { data: 'triggerTime', className: 'xj-nowrap', render: function (data) { return esc(XJ.formatDate(data)); } },
            { data: 'triggerCode', className: 'xj-nowrap', render: function (data) { return codeLabel(data, TRIGGER_CODES); } },
            { data: 'triggerMsg', className: 'xj-nowrap', render: messageLink('triggerMsg') },
            { data: 'handleTime', className: 'xj-nowrap', render: function (data) { return esc(XJ.formatDate(data)); } },
            { data: 'handleCode', className: 'xj-nowrap', render: function (data) { return codeLabel(data, HANDLE_CODES); } },
            { data: 'handleMsg', className: 'xj-nowrap', render: messageLink('handleMsg') },
            { data: 'id', className: 'xj-nowrap', render: function (data, type, row) { return opsMenu(row); } }
        ]
    });

    function rowOf(element) {
        return table.row($(element).closest('tr')).data();
    }

    $('#searchBtn').on('click', function () {
        table.draw();
    });
    $('#logStatus').on('change', function () {
        table.draw();
    });

    // --------------------------------------------------------------------------------------------
    // Details

    function showModal(title, $content) {
        $('#logMsgTitle').text(title);
        $('#logMsgContent').empty().append($content);
        $('#logMsgModal').modal('show');
    }

    var $list = $('#joblog_list');

    $list.on('click', '.log-msg', function (e) {
        e.preventDefault();
        var row = rowOf(this);
        var field = $(this).attr('data-field');
        var title = field === 'triggerMsg' ? I18n.joblog_field_triggerMsg : I18n.joblog_field_handleMsg;
        // The admin's own <br> and banner spans survive; anything else in the message is escaped.
        showModal(title, $('<div class="log-msg-body">').html(sanitizeMessage(row[field])));
    });

    $list.on('click', '.log-job-info', function (e) {
        e.preventDefault();
        var row = rowOf(this);
        var $dl = $('<dl class="log-job-detail">');
        var add = function (labelText, value) {
            $('<dt>').text(labelText).appendTo($dl);
            $('<dd>').text(value === null || value === undefined || value === '' ? I18n.system_empty : String(value)).appendTo($dl);
        };
        add(I18n.joblog_field_executorAddress, row.executorAddress);
        if (row.executorHandler) {
            add('JobHandler', row.executorHandler);
        }
        add(I18n.jobinfo_field_executorparam, row.executorParam);
        showModal(I18n.jobinfo_field_id + ' ' + row.jobId, $dl);
    });

    $list.on('click', '.log-op-kill', function (e) {
        e.preventDefault();
        var row = rowOf(this);
        XJ.confirm(I18n.joblog_kill_log + ' ?', function () {
            XJ.call('/joblog/logKill', { id: row.id }, {
                success: function (content) {
                    var text = I18n.system_opt_suc + (content ? ': ' + content : '');
                    XJ.alertOk(text);
                    table.draw(false);
                }
            });
        });
    });

    // --------------------------------------------------------------------------------------------
    // Clean-up

    var $clearForm = $('#clearLogForm');

    $('#clearLogBtn').on('click', function () {
        XJ.showModal($('#clearLogModal'), $clearForm);
        $clearForm.find('[name="jobGroup"]').val($group.val() || 0);
        $clearForm.find('[name="jobId"]').val($job.val() || 0);
        $('#clearLogGroupName').val($group.find('option:selected').text());
        $('#clearLogJobName').val($job.find('option:selected').text());
    });

    $clearForm.on('submit', function (e) {
        e.preventDefault();
        var $button = $('#clearLogSubmit').prop('disabled', true);
        XJ.call('/joblog/clearLog', {
            jobGroup: $clearForm.find('[name="jobGroup"]').val(),
            jobId: $clearForm.find('[name="jobId"]').val(),
            type: $clearForm.find('[name="type"]').val()
        }, {
            success: function () {
                $('#clearLogModal').modal('hide');
                XJ.toast(I18n.joblog_clean_log + ' ' + I18n.system_success, true);
                table.draw();
            }
        }).always(function () {
            $button.prop('disabled', false);
        });
    });
});
