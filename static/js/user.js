/* User manager: the user table and the add / edit dialogs with their executor permissions. */
$(function () {
    'use strict';

    var esc = escapeHtml;

    var table = XJ.dataTable('#user_list', {
        url: '/user/pageList',
        params: function () {
            return { role: $('#role').val(), username: $('#username').val() };
        },
        columns: [
            { data: 'id', visible: false, render: XJ.renderText },
            { data: 'username', width: '40%', render: XJ.renderText },
            { data: 'password', visible: false, render: function () { return '*********'; } },
            {
                data: 'role',
                width: '30%',
                render: function (data) {
                    return data === 1 ?
                        '<span class="label label-primary">' + esc(I18n.user_role_admin) + '</span>' :
                        '<span class="label label-default">' + esc(I18n.user_role_normal) + '</span>';
                }
            },
            { data: 'permission', visible: false, render: XJ.renderText },
            {
                data: 'id',
                className: 'xj-nowrap',
                render: function () {
                    return '<button type="button" class="btn btn-warning btn-xs user-op-edit"><i class="fa fa-edit"></i> ' +
                        esc(I18n.system_opt_edit) + '</button> ' +
                        '<button type="button" class="btn btn-danger btn-xs user-op-remove"><i class="fa fa-trash-o"></i> ' +
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
    $('#role').on('change', function () {
        table.draw();
    });
    $('#username').on('keydown', function (e) {
        if (e.which === 13) {
            table.draw();
        }
    });

    var $list = $('#user_list');

    $list.on('click', '.user-op-remove', function (e) {
        e.preventDefault();
        var row = rowOf(this);
        XJ.confirm(I18n.system_opt_del + ' [' + row.username + '] ?', function () {
            XJ.call('/user/remove', { id: row.id }, {
                success: function () {
                    XJ.toast(I18n.system_opt_suc, true);
                    table.draw(false);
                }
            });
        });
    });

    // --------------------------------------------------------------------------------------------
    // Dialogs

    $.validator.addMethod('xjUsername', function (value, element) {
        return this.optional(element) || /^[a-z][a-z0-9]*$/.test(value);
    }, I18n.user_username_valid);

    /** Administrators see every executor: the permission list is hidden and cleared for them. */
    function applyRole(form) {
        var admin = form.field('role').filter(':checked').val() === '1';
        var $group = form.$form.find('.user-permission-group');
        if (admin) {
            form.field('permission').prop('checked', false);
            $group.hide();
        } else {
            $group.show();
        }
    }

    function userForm(mode) {
        var adding = mode === 'add';
        var lengthText = I18n.system_lengh_limit + '[4-20]';
        var rules = {
            password: adding ? { required: true, rangelength: [4, 20] } : { rangelength: [4, 20] }
        };
        if (adding) {
            rules.username = { required: true, rangelength: [4, 20], xjUsername: true };
        }
        var form = new XJ.ModalForm(mode, {
            paths: { add: '/user/add', update: '/user/update' },
            validation: {
                rules: rules,
                messages: {
                    username: {
                        required: I18n.system_please_input + I18n.user_username,
                        rangelength: lengthText
                    },
                    password: {
                        required: I18n.system_please_input + I18n.user_password,
                        rangelength: lengthText
                    }
                }
            },
            afterReset: function () {
                applyRole(this);
            },
            fill: function (row) {
                var self = this;
                this.field('id').val(row.id);
                this.field('username').val(row.username || '');
                this.field('password').val('');
                this.field('role').filter('[value="' + (row.role === 1 ? '1' : '0') + '"]').prop('checked', true);
                this.field('permission').prop('checked', false);
                $.each(String(row.permission || '').split(','), function (i, id) {
                    if (id !== '') {
                        self.field('permission').filter('[value="' + $.escapeSelector(id) + '"]').prop('checked', true);
                    }
                });
                applyRole(this);
            },
            data: function () {
                var permissions = [];
                this.field('permission').filter(':checked').each(function () {
                    permissions.push(this.value);
                });
                var data = {
                    username: this.field('username').val(),
                    password: this.field('password').val(),
                    role: this.field('role').filter(':checked').val() || '0',
                    permission: permissions.join(',')
                };
                if (!this.adding) {
                    data.id = this.field('id').val();
                }
                return data;
            },
            saved: function (added) {
                table.draw(added);
            }
        });
        form.field('role').on('change', function () {
            applyRole(form);
        });
        form.reset();
        return form;
    }

    var addForm = userForm('add');
    var updateForm = userForm('update');

    $('#userAdd').on('click', function () {
        addForm.show();
    });

    $list.on('click', '.user-op-edit', function (e) {
        e.preventDefault();
        updateForm.show(rowOf(this));
    });
});
