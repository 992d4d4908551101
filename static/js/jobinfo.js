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

    function JobForm(mode) {
        var self = this;
        this.mode = mode;
        this.$modal = $('#' + mode + 'Modal');
        this.$form = $('#' + mode + 'Form');
        this.$cronInput = this.$form.find('.cron-input');
        this.$cronRow = this.$form.find('.cron-gen-row');
        this.cron = CronGen.attach(this.$cronInput, this.$form.find('.cron-gen-holder'));

        this.field('scheduleType').on('change', function () {
            self.showScheduleConf();
        });
        this.field('glueType').on('change', function () {
            self.applyGlueType(true);
        });
        this.$form.find('.cron-gen-toggle').attr('title', XJ.t('cron_builder')).on('click', function () {
            if (self.$cronRow.is(':visible')) {
                self.$cronRow.slideUp(150);
            } else {
                self.cron.load();
                self.$cronRow.slideDown(150);
            }
        });
        this.field('schedule_conf_FIX_RATE').add(this.field('executorTimeout')).add(this.field('executorFailRetryCount'))
            .on('input', function () {
                var digits = this.value.replace(/[^0-9]/g, '');
                if (digits !== this.value) {
                    this.value = digits;
                }
            });

        this.validator = this.$form.validate({
            errorElement: 'span',
            errorClass: 'help-block error',
            highlight: function (element) {
                $(element).closest('div[class^="col-"]').addClass('has-error');
            },
            unhighlight: function (element) {
                $(element).closest('div[class^="col-"]').removeClass('has-error');
            },
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
            },
            submitHandler: function () {
                self.submit();
                return false;
            }
        });

        this.$modal.on('hidden.bs.modal', function () {
            self.reset();
        });
    }

    JobForm.prototype.field = function (name) {
        return this.$form.find('[name="' + name + '"]');
    };

    JobForm.prototype.reset = function () {
        this.$form[0].reset();
        this.validator.resetForm();
        this.$form.find('.has-error').removeClass('has-error');
        this.$cronRow.hide();
        this.showScheduleConf();
        this.applyGlueType(false);
    };

    JobForm.prototype.showScheduleConf = function () {
        var type = this.field('scheduleType').val();
        this.$form.find('.schedule-conf').hide();
        this.$form.find('.schedule-conf-' + type).show();
        if (type !== 'CRON') {
            this.$cronRow.hide();
        }
    };

    /** BEAN jobs name a handler; GLUE jobs carry source instead (the add dialog sends a starter). */
    JobForm.prototype.applyGlueType = function (changed) {
        var type = this.field('glueType').val();
        var $handler = this.field('executorHandler');
        if (type === 'BEAN') {
            $handler.prop('readonly', false);
        } else {
            $handler.val('').prop('readonly', true);
            $handler.closest('.has-error').removeClass('has-error');
        }
        if (this.mode === 'add' && (changed || !this.field('glueSource').val())) {
            this.field('glueSource').val(starterSource(type));
        }
    };

    /** Fills the dialog from a job row (edit, copy). */
    JobForm.prototype.fill = function (row) {
        var self = this;
        $.each(FIELDS.concat(['glueType']), function (i, name) {
            var value = row[name];
            self.field(name).val(value === null || value === undefined ? '' : String(value));
        });
        if (this.mode === 'update') {
            this.field('id').val(row.id);
        }
        var conf = row.scheduleConf || '';
        this.field('schedule_conf_CRON').val(row.scheduleType === 'CRON' ? conf : '');
        this.field('schedule_conf_FIX_RATE').val(row.scheduleType === 'FIX_RATE' ? conf : '');
        this.showScheduleConf();
        this.applyGlueType(false);
        if (this.mode === 'add') {
            // A copy starts from the starter source of its type, not from the original's source.
            this.field('glueSource').val(starterSource(row.glueType));
        }
    };

    JobForm.prototype.open = function () {
        this.$modal.modal({ backdrop: 'static', keyboard: false, show: true });
    };

    JobForm.prototype.data = function () {
        var data = XJ.formData(this.$form, FIELDS);
        $.each(['executorTimeout', 'executorFailRetryCount'], function (i, name) {
            if (!/^\d+$/.test($.trim(data[name] || ''))) {
                data[name] = '0';
            }
        });
        var type = data.scheduleType;
        if (type === 'CRON') {
            data.scheduleConf = $.trim(this.field('schedule_conf_CRON').val());
        } else if (type === 'FIX_RATE') {
            data.scheduleConf = $.trim(this.field('schedule_conf_FIX_RATE').val());
        } else {
            data.scheduleConf = '';
        }
        this.field('scheduleConf').val(data.scheduleConf);
        if (this.mode === 'add') {
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
    };

    JobForm.prototype.submit = function () {
        var self = this;
        var $button = this.$form.find('.job-form-submit').prop('disabled', true);
        var adding = this.mode === 'add';
        XJ.call(adding ? '/jobinfo/add' : '/jobinfo/update', this.data(), {
            failText: adding ? I18n.system_add_fail : I18n.system_update_fail,
            success: function () {
                self.$modal.modal('hide');
                XJ.toast(adding ? I18n.system_add_suc : I18n.system_update_suc, true);
                reload(!adding);
            }
        }).always(function () {
            $button.prop('disabled', false);
        });
    };

    var addForm = new JobForm('add');
    var updateForm = new JobForm('update');
    addForm.reset();
    updateForm.reset();

    $('#jobAdd').on('click', function () {
        addForm.reset();
        addForm.field('jobGroup').val($('#jobGroup').val());
        addForm.open();
    });

    // --------------------------------------------------------------------------------------------
    // Row actions

    var $jobList = $('#job_list');

    $jobList.on('click', '.job-op-trigger', function (e) {
        e.preventDefault();
        var row = rowOf(this);
        var $form = $('#triggerForm');
        $form[0].reset();
        $form.find('[name="id"]').val(row.id);
        $form.find('[name="executorParam"]').val(row.executorParam || '');
        $form.find('[name="addressList"]').val('');
        $('#triggerJobDesc').text(row.jobDesc || '');
        $('#triggerModal').modal({ backdrop: 'static', keyboard: false, show: true });
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
        updateForm.reset();
        updateForm.fill(rowOf(this));
        updateForm.open();
    });

    $jobList.on('click', '.job-op-copy', function (e) {
        e.preventDefault();
        addForm.reset();
        addForm.fill(rowOf(this));
        addForm.open();
    });
});
