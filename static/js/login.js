/* Login page: validates the form and signs in through POST /login. */
$(function () {
    'use strict';

    var $form = $('#loginForm');

    if ($.fn.iCheck) {
        $form.find('input[type="checkbox"]').iCheck({
            checkboxClass: 'icheckbox_square-blue',
            radioClass: 'iradio_square-blue',
            increaseArea: '20%'
        });
    }

    $form.validate({
        errorElement: 'span',
        errorClass: 'help-block error',
        focusInvalid: true,
        highlight: function (element) {
            $(element).closest('.form-group').addClass('has-error');
        },
        unhighlight: function (element) {
            $(element).closest('.form-group').removeClass('has-error');
        },
        errorPlacement: function (error, element) {
            element.closest('.form-group').append(error);
        },
        rules: {
            userName: { required: true, minlength: 4, maxlength: 20 },
            password: { required: true, minlength: 4, maxlength: 20 }
        },
        messages: {
            userName: {
                required: I18n.login_username_empty,
                minlength: I18n.login_username_lt_4,
                maxlength: I18n.system_lengh_limit + '[4-20]'
            },
            password: {
                required: I18n.login_password_empty,
                minlength: I18n.login_password_lt_4,
                maxlength: I18n.system_lengh_limit + '[4-20]'
            }
        },
        submitHandler: function () {
            var $button = $('#loginSubmit').prop('disabled', true);
            var data = {
                userName: $('#userName').val(),
                password: $('#password').val()
            };
            if ($('#ifRemember').is(':checked')) {
                data.ifRemember = 'on';
            }
            XJ.request('/login', data).then(function (answer) {
                if (answer && answer.code === 200) {
                    XJ.toast(I18n.login_success, true);
                    setTimeout(function () {
                        // The page asked for before login, as the server checked it (same site, under the console).
                        window.location.href = $form.attr('data-return-to') || XJ.url('/');
                    }, 500);
                } else {
                    $button.prop('disabled', false);
                    XJ.alertError((answer && answer.msg) || I18n.login_fail);
                }
            }, function (msg) {
                $button.prop('disabled', false);
                if (msg !== null) {
                    XJ.alertError(msg);
                }
            });
            return false;
        }
    });
});
