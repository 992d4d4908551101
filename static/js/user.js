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

    function UserForm(mode) {
        var self = this;
        this.mode = mode;
        this.$modal = $('#' + mode + 'Modal');
        this.$form = $('#' + mode + 'Form');
        this.$form.find('input[name="role"]').on('change', function () {
            self.applyRole();
        });
        var lengthText = I18n.system_lengh_limit + '[4-20]';
        var rules = {
            password: mode === 'add' ? { required: true, rangelength: [4, 20] } : { rangelength: [4, 20] }
        };
        if (mode === 'add') {
            rules.username = { required: true, rangelength: [4, 20], xjUsername: true };
        }
        this.validator = this.$form.validate({
            errorElement: 'span',
            errorClass: 'help-block error',
            highlight: function (element) {
                $(element).closest('.form-group').addClass('has-error');
            },
            unhighlight: function (element) {
                $(element).closest('.form-group').removeClass('has-error');
            },
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

    UserForm.prototype.field = function (name) {
        return this.$form.find('[name="' + name + '"]');
    };

    /** Administrators see every executor: the permission list is hidden and cleared for them. */
    UserForm.prototype.applyRole = function () {
        var admin = this.field('role').filter(':checked').val() === '1';
        var $group = this.$form.find('.user-permission-group');
        if (admin) {
            this.field('permission').prop('checked', false);
            $group.hide();
        } else {
            $group.show();
        }
    };

    UserForm.prototype.reset = function () {
        this.$form[0].reset();
        this.validator.resetForm();
        this.$form.find('.has-error').removeClass('has-error');
        this.applyRole();
    };

    UserForm.prototype.fill = function (row) {
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
        this.applyRole();
    };

    UserForm.prototype.open = function () {
        this.$modal.modal({ backdrop: 'static', keyboard: false, show: true });
    };

    UserForm.prototype.submit = function () {
        var self = this;
        var adding = this.mode === 'add';
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
        if (!adding) {
            data.id = this.field('id').val();
        }
        var $button = this.$form.find('.user-form-submit').prop('disabled', true);
        XJ.call(adding ? '/user/add' : '/user/update', data, {
            failText: adding ? I18n.system_add_fail : I18n.system_update_fail,
            success: function () {
                self.$modal.modal('hide');
                XJ.toast(adding ? I18n.system_add_suc : I18n.system_update_suc, true);
                table.draw(adding);
            }
        }).always(function () {
            $button.prop('disabled', false);
        });
    };

    var addForm = new UserForm('add');
    var updateForm = new UserForm('update');
    addForm.reset();
    updateForm.reset();

    $('#userAdd').on('click', function () {
        addForm.reset();
        addForm.open();
    });

    $list.on('click', '.user-op-edit', function (e) {
        e.preventDefault();
        updateForm.reset();
        updateForm.fill(rowOf(this));
        updateForm.open();
    });
});
