/* Job manager: the job table, its row actions and the add / edit / run-once dialogs. */
$(function () {
    'use strict';

    var esc = escapeHtml;
    var FW_COLON = '\uff1a';

    // Display names of the enums, from the dialog's own select options.
    function optionLabels(selector) {
        var labels = {};
        $(selector).first().find('option').each(function () {
            labels[this.value] = $(this).text();
        });
        return labels;
    }
    var glueNames = optionLabels('#addForm select[name="glueType"]');

    // --------------------------------------------------------------------------------------------
    // Starter sources of new GLUE jobs

    /** An i18n label made safe for a double-quoted string of any of the script languages. */
    function label(key) {
        return String(I18n[key] || key).replace(/["'`$\\\r\n]/g, '');
    }

    function starterSource(glueType) {
        var loc = label('jobinfo_script_location');
        var param = label('jobinfo_field_executorparam');
        var index = label('jobinfo_shard_index');
        var total = label('jobinfo_shard_total');
        switch (glueType) {
            case 'GLUE_GROOVY':
                return [
                    'package com.example.glue;',
                    '',
                    'import com.xxl.job.core.context.XxlJobHelper;',
                    'import com.xxl.job.core.handler.IJobHandler;',
                    '',
                    '/** A GLUE (Java) job: the executor compiles this class and calls execute(). */',
                    'public class GlueHelloJob extends IJobHandler {',
                    '',
                    '    @Override',
                    '    public void execute() throws Exception {',
                    '        String param = XxlJobHelper.getJobParam();',
                    '        XxlJobHelper.log("Hello from a GLUE job, param: " + param);',
                    '    }',
                    '',
                    '}',
                    ''
                ].join('\n');
            case 'GLUE_SHELL':
                return [
                    '#!/bin/bash',
                    'echo "Hello from a GLUE shell job"',
                    '',
                    'echo "' + loc + ': $0"',
                    'echo "' + param + ': $1"',
                    'echo "' + index + ': $2"',
                    'echo "' + total + ': $3"',
                    '',
                    'exit 0',
                    ''
                ].join('\n');
            case 'GLUE_PYTHON':
                return [
                    '#!/usr/bin/env python3',
                    '# -*- coding: utf-8 -*-',
                    'import sys',
                    '',
                    'print("Hello from a GLUE python job")',
                    '',
                    'args = sys.argv + [""] * 4',
                    'print("' + loc + ':", args[0])',
                    'print("' + param + ':", args[1])',
                    'print("' + index + ':", args[2])',
                    'print("' + total + ':", args[3])',
                    '',
                    'sys.exit(0)',
                    ''
                ].join('\n');
            case 'GLUE_PHP':
                return [
                    '<?php',
                    '',
                    'echo "Hello from a GLUE php job\\n";',
                    '',
                    '$args = array_pad($argv, 4, "");',
                    'echo "' + loc + ': " . $args[0] . "\\n";',
                    'echo "' + param + ': " . $args[1] . "\\n";',
                    'echo "' + index + ': " . $args[2] . "\\n";',
                    'echo "' + total + ': " . $args[3] . "\\n";',
                    '',
                    'exit(0);',
                    ''
                ].join('\n');
            case 'GLUE_NODEJS':
                return [
                    '#!/usr/bin/env node',
                    '',
                    'console.log("Hello from a GLUE node.js job");',
                    '',
                    'const args = process.argv.slice(1);',
                    'console.log("' + loc + ':", args[0]);',
                    'console.log("' + param + ':", args[1] || "");',
                    'console.log("' + index + ':", args[2] || "");',
                    'console.log("' + total + ':", args[3] || "");',
                    '',
                    'process.exit(0);',
                    ''
                ].join('\n');
            case 'GLUE_POWERSHELL':
                return [
                    'Write-Host "Hello from a GLUE PowerShell job"',
                    '',
                    'Write-Host "' + loc + ':" $MyInvocation.MyCommand.Definition',
                    'Write-Host "' + param + ':" $args[0]',
                    'Write-Host "' + index + ':" $args[1]',
                    'Write-Host "' + total + ':" $args[2]',
                    '',
                    'exit 0',
                    ''
                ].join('\n');
            default:
                return '';
        }
    }

    // --------------------------------------------------------------------------------------------
    // Table

    function opsMenu(row) {
        var id = row.id;
        var items = [];
        var item = function (cls, icon, text, href, newTab) {
            items.push('<li><a class="' + cls + '" data-id="' + esc(id) + '"' +
                (href ? ' href="' + esc(href) + '"' : ' href="#"') + (newTab ? ' target="_blank" rel="noopener"' : '') +
                '><i class="fa fa-fw ' + icon + '"></i> ' + esc(text) + '</a></li>');
        };
        var divider = function () {
            items.push('<li role="separator" class="divider"></li>');
        };
        item('job-op-trigger', 'fa-play-circle-o', I18n.jobinfo_opt_run);
        item('job-op-log', 'fa-file-text-o', I18n.jobinfo_opt_log, XJ.url('/joblog?jobId=' + encodeURIComponent(id)));
        item('job-op-registry', 'fa-server', I18n.jobinfo_opt_registryinfo);
        if (row.scheduleType === 'CRON' || row.scheduleType === 'FIX_RATE') {
            item('job-op-next', 'fa-clock-o', I18n.jobinfo_opt_next_time);
        }
        divider();
        if (row.glueType && row.glueType !== 'BEAN') {
            item('job-op-glue', 'fa-code', 'GLUE IDE', XJ.url('/jobcode?jobId=' + encodeURIComponent(id)), true);
            divider();
        }
        if (row.triggerStatus === 1) {
            item('job-op-stop', 'fa-pause', I18n.jobinfo_opt_stop);
        } else {
            item('job-op-start', 'fa-play', I18n.jobinfo_opt_start);
        }
        item('job-op-edit', 'fa-edit', I18n.system_opt_edit);
        item('job-op-remove', 'fa-trash-o', I18n.system_opt_del);
        item('job-op-copy', 'fa-copy', I18n.system_opt_copy);
        return '<div class="btn-group job-ops">' +
            '<button type="button" class="btn btn-primary btn-sm dropdown-toggle job-op-toggle" data-toggle="dropdown" aria-haspopup="true" aria-expanded="false">' +
            esc(I18n.system_opt) + ' <span class="caret"></span></button>' +
            '<ul class="dropdown-menu dropdown-menu-right">' + items.join('') + '</ul></div>';
    }

    var table = XJ.dataTable('#job_list', {
        url: '/jobinfo/pageList',
        params: function () {
            return {
                jobGroup: $('#jobGroup').val(),
                triggerStatus: $('#triggerStatus').val(),
                jobDesc: $('#jobDesc').val(),
                executorHandler: $('#executorHandler').val(),
                author: $('#author').val()
            };
        },
        columns: [
            { data: 'id', className: 'xj-nowrap', width: '6%', render: XJ.renderText },
            {
                data: 'jobDesc',
                width: '22%',
                render: function (data) {
                    return '<span class="job-desc">' + esc(data) + '</span>';
                }
            },
            {
                data: 'scheduleType',
                width: '18%',
                render: function (data, type, row) {
                    var text = data || '';
                    if (row.scheduleConf) {
                        text += FW_COLON + row.scheduleConf;
                    }
                    return esc(text);
                }
            },
            {
                data: 'glueType',
                width: '20%',
                render: function (data, type, row) {
                    var text = glueNames[data] || data || '';
                    if (row.executorHandler) {
                        text += FW_COLON + row.executorHandler;
                    }
                    return esc(text);
                }
            },
            { data: 'author', width: '10%', render: XJ.renderText },
            {
                data: 'triggerStatus',
                className: 'xj-nowrap',
                width: '8%',
                render: function (data) {
                    return data === 1 ?
                        '<span class="label label-success xj-status job-status-running">RUNNING</span>' :
                        '<span class="label label-default xj-status job-status-stopped">STOP</span>';
                }
            },
            {
                data: 'id',
                className: 'xj-nowrap',
                width: '10%',
                render: function (data, type, row) {
                    return opsMenu(row);
                }
            }
        ]
    });

    function rowOf(element) {
        return table.row($(element).closest('tr')).data();
    }

    function reload(keepPage) {
        table.draw(keepPage ? false : true);
    }

    $('#searchBtn').on('click', function () {
        reload(false);
    });
    $('#jobDesc, #executorHandler, #author').on('keydown', function (e) {
        if (e.which === 13) {
            reload(false);
        }
    });
    $('#triggerStatus').on('change', function () {
        reload(false);
    });
    $('#jobGroup').on('change', function () {
        window.location.href = XJ.url('/jobinfo?jobGroup=' + encodeURIComponent($(this).val()));
    });

    // --------------------------------------------------------------------------------------------
    // Add / edit dialogs

    var FIELDS = ['jobGroup', 'jobDesc', 'author', 'alarmEmail', 'scheduleType', 'misfireStrategy',
        'executorRouteStrategy', 'childJobId', 'executorBlockStrategy', 'executorTimeout',
        'executorFailRetryCount', 'executorHandler', 'executorParam'];

    /** BEAN jobs name a handler; GLUE jobs carry source instead (the add dialog sends a starter). */
    function applyGlueType(form, changed) {
        var type = form.field('glueType').val();
        var $handler = form.field('executorHandler');
        if (type === 'BEAN') {
            $handler.prop('readonly', false);
        } else {
            $handler.val('').prop('readonly', true);
            $handler.closest('.has-error').removeClass('has-error');
        }
        if (form.adding && (changed || !form.field('glueSource').val())) {
            form.field('glueSource').val(starterSource(type));
        }
    }

    function showScheduleConf(form) {
        var type = form.field('scheduleType').val();
        form.$form.find('.schedule-conf').hide();
        form.$form.find('.schedule-conf-' + type).show();
        if (type !== 'CRON') {
            form.$cronRow.hide();
        }
    }

    function jobForm(mode) {
        var form = new XJ.ModalForm(mode, {
            paths: { add: '/jobinfo/add', update: '/jobinfo/update' },
            group: 'div[class^="col-"]',
            validation: {
                errorPlacement: function (error, element) {
                    var $group = element.closest('.input-group');
                    error.insertAfter($group.length ? $group : element);
                },
                rules: {
                    jobDesc: { required: true, maxlength: 50 },
                    author: { required: true, maxlength: 50 }
                },
                messages: {
                    jobDesc: { required: I18n.system_please_input + I18n.jobinfo_field_jobdesc },
                    author: { required: I18n.system_please_input + I18n.jobinfo_field_author }
                }
            },
            afterReset: function () {
                this.$cronRow.hide();
                this.cron.clearError();
                showScheduleConf(this);
                applyGlueType(this, false);
            },
            /** Edit, or copy into the add dialog. */
            fill: function (row) {
                var self = this;
                $.each(FIELDS.concat(['glueType']), function (i, name) {
                    var value = row[name];
                    self.field(name).val(value === null || value === undefined ? '' : String(value));
                });
                if (!this.adding) {
                    this.field('id').val(row.id);
                }
                var conf = row.scheduleConf || '';
                this.field('schedule_conf_CRON').val(row.scheduleType === 'CRON' ? conf : '');
                this.field('schedule_conf_FIX_RATE').val(row.scheduleType === 'FIX_RATE' ? conf : '');
                showScheduleConf(this);
                applyGlueType(this, false);
                if (this.adding) {
                    // A copy starts from the starter source of its type, not from the original's source.
                    this.field('glueSource').val(starterSource(row.glueType));
                }
            },
            data: function () {
                var data = XJ.formData(this.$form, FIELDS);
                $.each(['executorTimeout', 'executorFailRetryCount'], function (i, name) {
                    if (!/^\d+$/.test($.trim(data[name] || ''))) {
                        data[name] = '0';
                    }
                });
                var type = data.scheduleType;
                if (type === 'CRON' || type === 'FIX_RATE') {
                    data.scheduleConf = $.trim(this.field('schedule_conf_' + type).val());
                } else {
                    data.scheduleConf = '';
                }
                this.field('scheduleConf').val(data.scheduleConf);
                if (this.adding) {
                    data.glueType = this.field('glueType').val();
                    data.glueSource = this.field('glueSource').val();
                    data.glueRemark = this.field('glueRemark').val();
                } else {
                    data.id = this.field('id').val();
                }
                $.each(data, function (name, value) {
                    if (value === undefined || value === null) {
                        data[name] = '';
                    }
                });
                return data;
            },
            saved: function (adding) {
                reload(!adding);
            }
        });

        form.$cronRow = form.$form.find('.cron-gen-row');
        form.cron = CronGen.attach(form.$form.find('.cron-input'), form.$form.find('.cron-gen-holder'), {
            $error: form.$form.find('.cron-error')
        });
        form.field('scheduleType').on('change', function () {
            showScheduleConf(form);
        });
        form.field('glueType').on('change', function () {
            applyGlueType(form, true);
        });
        form.$form.find('.cron-gen-toggle').attr('title', XJ.t('cron_builder')).on('click', function () {
            if (form.$cronRow.is(':visible')) {
                form.$cronRow.slideUp(150);
            } else {
                form.cron.load();
                form.$cronRow.slideDown(150);
            }
        });
        form.field('schedule_conf_FIX_RATE').add(form.field('executorTimeout')).add(form.field('executorFailRetryCount'))
            .on('input', function () {
                var digits = this.value.replace(/[^0-9]/g, '');
                if (digits !== this.value) {
                    this.value = digits;
                }
            });
        form.reset();
        return form;
    }

    var addForm = jobForm('add');
    var updateForm = jobForm('update');

    $('#jobAdd').on('click', function () {
        addForm.show();
        addForm.field('jobGroup').val($('#jobGroup').val());
    });

    // --------------------------------------------------------------------------------------------
    // Row actions

    var $jobList = $('#job_list');

    $jobList.on('click', '.job-op-trigger', function (e) {
        e.preventDefault();
        var row = rowOf(this);
        var $form = $('#triggerForm');
        XJ.showModal($('#triggerModal'), $form);
        $form.find('[name="id"]').val(row.id);
        $form.find('[name="executorParam"]').val(row.executorParam || '');
        $form.find('[name="addressList"]').val('');
        $('#triggerJobDesc').text(row.jobDesc || '');
    });

    $('#triggerForm').on('submit', function (e) {
        e.preventDefault();
        var $form = $(this);
        var $button = $('#triggerSubmit').prop('disabled', true);
        XJ.call('/jobinfo/trigger', {
            id: $form.find('[name="id"]').val(),
            executorParam: $form.find('[name="executorParam"]').val(),
            addressList: $form.find('[name="addressList"]').val()
        }, {
            success: function () {
                $('#triggerModal').modal('hide');
                XJ.toast(I18n.jobinfo_opt_run + ' ' + I18n.system_success, true);
            }
        }).always(function () {
            $button.prop('disabled', false);
        });
    });

    $jobList.on('click', '.job-op-registry', function (e) {
        e.preventDefault();
        var row = rowOf(this);
        XJ.call('/jobgroup/loadById', { id: row.jobGroup }, {
            success: function (group) {
                var list = (group && group.registryList) || [];
                XJ.showHtml(I18n.jobinfo_opt_registryinfo, XJ.listHtml(list, 'job-registry-list'), { area: ['480px', 'auto'] });
            }
        });
    });

    $jobList.on('click', '.job-op-next', function (e) {
        e.preventDefault();
        var row = rowOf(this);
        XJ.call('/jobinfo/nextTriggerTime', { scheduleType: row.scheduleType, scheduleConf: row.scheduleConf || '' }, {
            success: function (times) {
                XJ.showHtml(I18n.jobinfo_opt_next_time, XJ.listHtml(times || [], 'job-next-times'), { area: ['420px', 'auto'] });
            }
        });
    });

    function operate(element, path, opLabel) {
        var row = rowOf(element);
        XJ.confirm(opLabel + ' [' + (row.jobDesc || row.id) + '] ?', function () {
            XJ.call(path, { id: row.id }, {
                success: function () {
                    XJ.toast(opLabel + ' ' + I18n.system_success, true);
                    reload(true);
                }
            });
        });
    }

    $jobList.on('click', '.job-op-start', function (e) {
        e.preventDefault();
        operate(this, '/jobinfo/start', I18n.jobinfo_opt_start);
    });
    $jobList.on('click', '.job-op-stop', function (e) {
        e.preventDefault();
        operate(this, '/jobinfo/stop', I18n.jobinfo_opt_stop);
    });
    $jobList.on('click', '.job-op-remove', function (e) {
        e.preventDefault();
        operate(this, '/jobinfo/remove', I18n.system_opt_del);
    });

    $jobList.on('click', '.job-op-edit', function (e) {
        e.preventDefault();
        updateForm.show(rowOf(this));
    });

    $jobList.on('click', '.job-op-copy', function (e) {
        e.preventDefault();
        addForm.show(rowOf(this));
    });

    // Jobs as code: the executor chosen above as a document, and a document planned or applied.
    $('#jobExport').on('click', function () {
        window.location.href = XJ.url('/jobinfo/export?jobGroup=' + encodeURIComponent($('#jobGroup').val() || 0));
    });

    // The job dependency graph of the executor chosen above.
    $('#jobGraph').on('click', function () {
        window.location.href = XJ.url('/jobinfo/graph?jobGroup=' + encodeURIComponent($('#jobGroup').val() || 0));
    });

    // A file is always planned first (a dry run); only that plan's own button applies it, after a
    // confirmation that counts what it deletes.
    var applying = null;

    function showApplyOutcome(text, plan, changes, deletions) {
        $('#applyOutcome').prop('hidden', false).text(text);
        $('#applyPlan').prop('hidden', !plan).text(plan || '');
        applying = applying && changes ? $.extend(applying, { changes: changes, deletions: deletions }) : null;
        $('#applyConfirm').prop('hidden', !applying).text(applying ? XJ.t('code_apply_changes', { count: changes }) : '');
    }

    $('#jobApply').on('click', function () {
        XJ.showModal($('#applyModal'), $('#applyForm'));
        applying = null;
        $('#applyOutcome, #applyPlan, #applyConfirm').prop('hidden', true);
    });

    function sendDocument(dryRun, done) {
        var $buttons = $('#applySubmit, #applyConfirm').prop('disabled', true);
        XJ.call('/jobinfo/apply', {
            document: applying.document,
            format: applying.format,
            dryRun: dryRun ? 'true' : 'false',
            prune: applying.prune ? 'true' : 'false'
        }, { success: done }).always(function () {
            $buttons.prop('disabled', false);
        });
    }

    $('#applyForm').on('submit', function (e) {
        e.preventDefault();
        var $form = $(this);
        var file = $form.find('[name="document"]')[0].files[0];
        if (!file) {
            XJ.alertError(I18n.code_no_file);
            return;
        }
        var format = /\.json$/i.test(file.name) ? 'json' : /\.toml$/i.test(file.name) ? 'toml' : null;
        if (!format) {
            XJ.alertError(XJ.t('code_unknown_format', { file: file.name }));
            return;
        }
        var prune = $form.find('[name="prune"]').prop('checked');
        var reader = new FileReader();
        reader.onload = function () {
            applying = { document: reader.result, format: format, prune: prune };
            sendDocument(true, function (result) {
                var title = result.changes ? I18n.code_plan_title : I18n.code_plan_nothing;
                showApplyOutcome(title, result.plan, result.changes, result.deletions);
            });
        };
        reader.onerror = function () {
            XJ.alertError(I18n.code_no_file);
        };
        reader.readAsText(file);
    });

    $('#applyConfirm').on('click', function () {
        if (!applying) {
            return;
        }
        var question = applying.deletions
            ? XJ.t('code_apply_confirm_delete', { count: applying.changes, deletions: applying.deletions })
            : XJ.t('code_apply_confirm', { count: applying.changes });
        XJ.confirm(question, function () {
            sendDocument(false, function (result) {
                applying = null;
                showApplyOutcome(XJ.t('code_applied', { count: result.changes }), result.plan, 0, 0);
                reload(true);
            });
        });
    });
});
