/* Executor manager: the group table, online nodes and the add / edit dialogs. */
$(function () {
    'use strict';

    var esc = escapeHtml;

    var table = XJ.dataTable('#jobgroup_list', {
        url: '/jobgroup/pageList',
        params: function () {
            return { appname: $('#appname').val(), title: $('#title').val() };
        },
        columns: [
            { data: 'id', visible: false, render: XJ.renderText },
            { data: 'appname', width: '28%', render: XJ.renderText },
            { data: 'title', width: '22%', render: XJ.renderText },
            {
                data: 'addressType',
                width: '14%',
                render: function (data) {
                    return esc(data === 0 ? I18n.jobgroup_field_addressType_0 : I18n.jobgroup_field_addressType_1);
                }
            },
            {
                data: 'registryList',
                width: '18%',
                render: function (data) {
                    if (!data || !data.length) {
                        return '<span class="text-muted">' + esc(I18n.system_empty) + '</span>';
                    }
                    return '<a href="#" class="group-registry">' + esc(I18n.system_show) + ' (' + esc(data.length) + ')</a>';
                }
            },
            {
                data: 'id',
                className: 'xj-nowrap',
                render: function () {
                    return '<button type="button" class="btn btn-warning btn-xs group-op-edit"><i class="fa fa-edit"></i> ' +
                        esc(I18n.system_opt_edit) + '</button> ' +
                        '<button type="button" class="btn btn-danger btn-xs group-op-remove"><i class="fa fa-trash-o"></i> ' +
                        esc(I18n.system_opt_del) + '</button>';
                }
            }
        ]
    });

    function rowOf(element) {
        return table.row($(element).closest('tr')).data();
    }

    $('#searchBtn').on('click', function () {
        table.draw();
    });
    $('#appname, #title').on('keydown', function (e) {
        if (e.which === 13) {
            table.draw();
        }
    });

    var $list = $('#jobgroup_list');

    $list.on('click', '.group-registry', function (e) {
        e.preventDefault();
        var row = rowOf(this);
        XJ.showHtml(XJ.t('registry_online') + ' \u00b7 ' + (row.title || row.appname), XJ.listHtml(row.registryList, 'group-registry-list'),
            { area: ['480px', 'auto'] });
    });

    $list.on('click', '.group-op-remove', function (e) {
        e.preventDefault();
        var row = rowOf(this);
        XJ.confirm(I18n.jobgroup_del + ' [' + (row.title || row.appname) + '] ?', function () {
            XJ.call('/jobgroup/remove', { id: row.id }, {
                success: function () {
                    XJ.toast(I18n.system_opt_suc, true);
                    table.draw(false);
                }
            });
        });
    });

    // --------------------------------------------------------------------------------------------
    // Dialogs

    $.validator.addMethod('xjAppname', function (value, element) {
        return this.optional(element) || /^[a-z][a-zA-Z0-9-]*$/.test(value);
    }, I18n.jobgroup_field_appname_limit);

    /** Automatic registration: the address list is filled by the executors, so it is read-only here. */
    function applyType(form, changed) {
        var manual = form.field('addressType').filter(':checked').val() === '1';
        var $addresses = form.field('addressList');
        if (manual) {
            $addresses.prop('readonly', false).css('background-color', '');
        } else {
            if (changed || form.adding) {
                $addresses.val('');
            }
            $addresses.prop('readonly', true).css('background-color', '#eee');
        }
    }

    function groupForm(mode) {
        var form = new XJ.ModalForm(mode, {
            paths: { add: '/jobgroup/save', update: '/jobgroup/update' },
            validation: {
                rules: {
                    appname: { required: true, rangelength: [4, 64], xjAppname: true },
                    title: { required: true, rangelength: [4, 12] }
                },
                messages: {
                    appname: {
                        required: I18n.system_please_input + 'AppName',
                        rangelength: I18n.jobgroup_field_appname_length
                    },
                    title: {
                        required: I18n.system_please_input + I18n.jobgroup_field_title,
                        rangelength: I18n.jobgroup_field_title_length
                    }
                }
            },
            afterReset: function () {
                applyType(this, false);
            },
            fill: function (row) {
                this.field('id').val(row.id);
                this.field('appname').val(row.appname || '');
                this.field('title').val(row.title || '');
                this.field('addressType').filter('[value="' + (row.addressType === 0 ? '0' : '1') + '"]').prop('checked', true);
                this.field('addressList').val(row.addressList || '');
                applyType(this, false);
            },
            data: function () {
                var data = XJ.formData(this.$form, ['appname', 'title', 'addressType', 'addressList']);
                if (data.addressList === undefined || data.addressList === null) {
                    data.addressList = '';
                }
                if (!this.adding) {
                    data.id = this.field('id').val();
                }
                return data;
            },
            saved: function (adding) {
                table.draw(adding);
            }
        });
        form.field('addressType').on('change', function () {
            applyType(form, true);
        });
        form.reset();
        return form;
    }

    var addForm = groupForm('add');
    var updateForm = groupForm('update');

    // Jobs as code: every executor, with its jobs, as a document.
    $('#jobgroupExport').on('click', function () {
        window.location.href = XJ.url('/jobinfo/export');
    });

    $('#jobgroupAdd').on('click', function () {
        addForm.show();
    });

    $list.on('click', '.group-op-edit', function (e) {
        e.preventDefault();
        updateForm.show(rowOf(this));
    });
});
