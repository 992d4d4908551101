/*
 * Shared client code of the console: HTML escaping, the trigger/handle message sanitiser, the AJAX helper
 * (ReturnT handling and the login redirect), dialogs, DataTables and date-range defaults, and the layout's
 * own behaviour (sidebar state cookie, change password, logout, back-to-top).
 *
 * Everything a page inserts as HTML goes through escapeHtml() or sanitizeMessage().
 */
(function (window, $) {
    'use strict';

    var I18n = window.I18n || {};
    window.I18n = I18n;

    // ------------------------------------------------------------------------------------------------
    // Escaping

    var ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

    /** Escapes the five HTML-significant characters; null and undefined become the empty string. */
    function escapeHtml(value) {
        if (value === null || value === undefined) {
            return '';
        }
        return String(value).replace(/[&<>"']/g, function (ch) {
            return ESCAPES[ch];
        });
    }

    /** The inverse of escapeHtml for exactly its five entities, in one pass. */
    function unescapeHtml(value) {
        if (value === null || value === undefined) {
            return '';
        }
        var back = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
        return String(value).replace(/&(amp|lt|gt|quot|#39);/g, function (entity) {
            return back[entity];
        });
    }

    /*
     * The admin's own markup in trigger_msg / handle_msg, matched literally and case-sensitively; this is
     * the allow-list of the server (src/domain/html.rs) and must stay identical to it.
     */
    var MESSAGE_TAGS = [
        '<br>',
        '<br/>',
        '</span>',
        '<span style="color:#00c0ef;" >',
        '<span style="color:#F39C12;" >'
    ];

    /**
     * Escapes a stored trigger/handle message except for the admin's own line breaks and banner spans.
     * A `</span>` without an open span is escaped, and spans still open at the end are closed, so the
     * result never closes markup it did not open.
     */
    function sanitizeMessage(text) {
        if (text === null || text === undefined) {
            return '';
        }
        text = String(text);
        var out = '';
        var openSpans = 0;
        var i = 0;
        while (i < text.length) {
            var tag = null;
            if (text.charAt(i) === '<') {
                for (var k = 0; k < MESSAGE_TAGS.length; k++) {
                    if (text.substr(i, MESSAGE_TAGS[k].length) === MESSAGE_TAGS[k]) {
                        tag = MESSAGE_TAGS[k];
                        break;
                    }
                }
            }
            if (tag === null) {
                out += escapeHtml(text.charAt(i));
                i += 1;
                continue;
            }
            if (tag === '</span>') {
                if (openSpans === 0) {
                    out += escapeHtml(tag);
                } else {
                    openSpans -= 1;
                    out += tag;
                }
            } else {
                if (tag.indexOf('<span') === 0) {
                    openSpans += 1;
                }
                out += tag;
            }
            i += tag.length;
        }
        for (; openSpans > 0; openSpans--) {
            out += '</span>';
        }
        return out;
    }

    window.escapeHtml = escapeHtml;
    window.unescapeHtml = unescapeHtml;
    window.sanitizeMessage = sanitizeMessage;

    // In Node (unit checks of the pure functions) there is no jQuery: stop here.
    if (!$) {
        if (typeof module !== 'undefined' && module.exports) {
            module.exports = { escapeHtml: escapeHtml, unescapeHtml: unescapeHtml, sanitizeMessage: sanitizeMessage };
        }
        return;
    }

    // ------------------------------------------------------------------------------------------------
    // Page facts

    var XJ = window.XJ = window.XJ || {};
    XJ.escapeHtml = escapeHtml;
    XJ.unescapeHtml = unescapeHtml;
    XJ.sanitizeMessage = sanitizeMessage;

    /** The context path ("" or "/xxl-job-admin"), from the page's meta element. */
    var baseUrl = $('meta[name="xxl-base-url"]').attr('content') || '';
    window.base_url = baseUrl;
    XJ.baseUrl = baseUrl;
    XJ.lang = $('html').attr('data-lang') || 'zh_CN';

    /** A text of the page's I18n bundle with its {name} slots filled; an unknown key shows as itself. */
    XJ.t = function (key, vars) {
        var text = I18n[key] !== undefined ? I18n[key] : key;
        if (vars) {
            text = text.replace(/\{(\w+)\}/g, function (all, name) {
                return vars[name] !== undefined ? vars[name] : all;
            });
        }
        return text;
    };

    XJ.url = function (path) {
        return baseUrl + path;
    };

    /**
     * To the login page; with `returnHere` (a session that ended under the user) the login returns to this
     * page afterwards (the server follows only console pages).
     */
    XJ.goLogin = function (returnHere) {
        var here = window.location.pathname + window.location.search;
        window.location.href = baseUrl + '/toLogin' + (returnHere ? '?redirect=' + encodeURIComponent(here) : '');
    };

    // ------------------------------------------------------------------------------------------------
    // Dialogs (layer; every text is escaped before it is handed over, because layer inserts HTML)

    function hasLayer() {
        return typeof window.layer !== 'undefined';
    }

    /** A short toast; `ok === false` shows the failure icon. */
    XJ.toast = function (text, ok, done) {
        if (!hasLayer()) {
            window.alert(text);
            if (done) { done(); }
            return;
        }
        window.layer.msg(escapeHtml(text), { icon: ok === false ? 2 : 1, time: 1500 }, done);
    };

    /** A message dialog with an OK button. icon: 1 ok, 2 error, 0 info. */
    XJ.alert = function (text, icon, done) {
        if (!hasLayer()) {
            window.alert(text);
            if (done) { done(); }
            return;
        }
        var finished = false;
        var finish = function () {
            if (!finished) {
                finished = true;
                if (done) { done(); }
            }
        };
        window.layer.open({
            type: 0,
            title: escapeHtml(I18n.system_tips),
            icon: icon === undefined ? 0 : icon,
            content: escapeHtml(text),
            btn: [escapeHtml(I18n.system_ok)],
            yes: function (index) {
                window.layer.close(index);
            },
            end: finish
        });
    };

    XJ.alertError = function (text, done) {
        XJ.alert(text || I18n.system_opt_fail, 2, done);
    };

    XJ.alertOk = function (text, done) {
        XJ.alert(text || I18n.system_opt_suc, 1, done);
    };

    /** A confirmation dialog; onYes runs after OK. */
    XJ.confirm = function (text, onYes) {
        if (!hasLayer()) {
            if (window.confirm(text)) { onYes(); }
            return;
        }
        window.layer.confirm(escapeHtml(text), {
            icon: 3,
            title: escapeHtml(I18n.system_tips),
            btn: [escapeHtml(I18n.system_ok), escapeHtml(I18n.system_cancel)]
        }, function (index) {
            window.layer.close(index);
            onYes();
        });
    };

    /** A dialog showing markup that the caller has already made safe. */
    XJ.showHtml = function (title, safeHtml, options) {
        options = options || {};
        return window.layer.open($.extend({
            type: 1,
            title: escapeHtml(title),
            area: ['640px', 'auto'],
            maxHeight: 560,
            shadeClose: true,
            skin: 'xj-layer',
            content: '<div class="xj-layer-body">' + safeHtml + '</div>'
        }, options));
    };

    /** An ordered list of plain strings as safe HTML. */
    XJ.listHtml = function (items, className) {
        if (!items || !items.length) {
            return '<p class="text-muted">' + escapeHtml(I18n.system_empty) + '</p>';
        }
        var html = '<ol class="xj-list ' + (className || '') + '">';
        $.each(items, function (i, item) {
            html += '<li>' + escapeHtml(item) + '</li>';
        });
        return html + '</ol>';
    };

    // ------------------------------------------------------------------------------------------------
    // AJAX

    /** True when the answer is the login page (the gate's 302 followed by the browser). */
    function isLoginAnswer(rawXhr, jqXhr) {
        var url = (rawXhr && rawXhr.responseURL) || '';
        if (/\/toLogin\/?(\?|$)/.test(url)) {
            return true;
        }
        var type = (jqXhr && jqXhr.getResponseHeader && jqXhr.getResponseHeader('Content-Type')) || '';
        return type.indexOf('text/html') >= 0;
    }

    function httpErrorText(jqXhr) {
        var text = jqXhr && jqXhr.responseText;
        if (text) {
            try {
                var body = JSON.parse(text);
                if (body && (body.msg || body.message)) {
                    return body.msg || body.message;
                }
            } catch (ignored) {
                // not JSON
            }
        }
        var status = jqXhr && jqXhr.status ? ' (HTTP ' + jqXhr.status + ')' : '';
        return I18n.system_api_error + status;
    }

    /**
     * Sends form-encoded data (an object, an array of {name, value} or a serialized string) to a console
     * path. Resolves with the parsed JSON answer; rejects with an error text, or with null after starting
     * the navigation to the login page.
     */
    XJ.request = function (path, data, options) {
        options = options || {};
        var deferred = $.Deferred();
        var raw = null;
        $.ajax({
            url: baseUrl + path,
            type: options.method || 'POST',
            data: data || {},
            dataType: 'text',
            cache: false,
            xhr: function () {
                raw = new window.XMLHttpRequest();
                return raw;
            }
        }).done(function (body, status, jqXhr) {
            if (isLoginAnswer(raw, jqXhr)) {
                XJ.goLogin(true);
                deferred.reject(null);
                return;
            }
            var json;
            try {
                json = JSON.parse(body);
            } catch (e) {
                deferred.reject(I18n.system_api_error);
                return;
            }
            deferred.resolve(json);
        }).fail(function (jqXhr) {
            if (jqXhr.status === 0 && jqXhr.statusText === 'abort') {
                deferred.reject(null);
                return;
            }
            if (isLoginAnswer(raw, jqXhr)) {
                XJ.goLogin(true);
                deferred.reject(null);
                return;
            }
            deferred.reject(httpErrorText(jqXhr));
        });
        return deferred.promise();
    };

    /**
     * Calls a ReturnT endpoint. options.success(content, answer) on code 200; otherwise options.error(msg)
     * or, by default, an error dialog with the answer's msg (or options.failText when msg is null).
     */
    XJ.call = function (path, data, options) {
        options = options || {};
        var onError = function (msg) {
            if (msg === null) {
                return;
            }
            msg = msg || options.failText || I18n.system_opt_fail;
            if (options.error) {
                options.error(msg);
            } else {
                XJ.alertError(msg);
            }
        };
        return XJ.request(path, data, options).then(function (answer) {
            if (answer && answer.code === 200) {
                if (options.success) {
                    options.success(answer.content, answer);
                }
            } else {
                onError((answer && answer.msg) || '');
            }
        }, onError);
    };

    /** Collects named fields of a form into a plain object (checkbox groups are handled by callers). */
    XJ.formData = function ($form, names) {
        var data = {};
        $.each(names, function (i, name) {
            var $field = $form.find('[name="' + name + '"]');
            if (!$field.length) {
                return;
            }
            if ($field.is(':radio')) {
                data[name] = $field.filter(':checked').val();
            } else {
                data[name] = $field.val();
            }
        });
        return data;
    };

    // ------------------------------------------------------------------------------------------------
    // Dialogs and forms

    /** Opens a dialog that only its own buttons close, with `$form` (if given) cleared of values and errors. */
    XJ.showModal = function ($modal, $form) {
        if ($form) {
            $form[0].reset();
            $form.find('.has-error').removeClass('has-error');
            $form.find('.help-block.error').remove();
        }
        $modal.modal({ backdrop: 'static', keyboard: false, show: true });
    };

    /**
     * jQuery Validation with the console's look: the message in a help block, the field's container
     * (`group`, default `.form-group`) marked with has-error. `settings` holds the rules, messages and
     * anything else jQuery Validation takes; `submit` runs once the form is valid.
     */
    XJ.validate = function ($form, settings, submit, group) {
        var container = group || '.form-group';
        return $form.validate($.extend({
            errorElement: 'span',
            errorClass: 'help-block error',
            highlight: function (element) {
                $(element).closest(container).addClass('has-error');
            },
            unhighlight: function (element) {
                $(element).closest(container).removeClass('has-error');
            },
            submitHandler: function () {
                submit();
                return false;
            }
        }, settings));
    };

    /**
     * The add or edit dialog of a table page: #addModal/#addForm or #updateModal/#updateForm. `spec` is the
     * page's part: `paths` {add, update}, `validation` (settings for XJ.validate) and `group`, `data()` the
     * request parameters, `fill(row)` from a table row, optional `afterReset()`, and `saved(adding)` to
     * refresh the table. The hooks run with the form as `this`.
     */
    function ModalForm(mode, spec) {
        var self = this;
        this.mode = mode;
        this.adding = mode === 'add';
        this.spec = spec;
        this.$modal = $('#' + mode + 'Modal');
        this.$form = $('#' + mode + 'Form');
        this.validator = XJ.validate(this.$form, spec.validation, function () {
            self.submit();
        }, spec.group);
        this.$modal.on('hidden.bs.modal', function () {
            self.reset();
        });
    }

    ModalForm.prototype.field = function (name) {
        return this.$form.find('[name="' + name + '"]');
    };

    ModalForm.prototype.reset = function () {
        this.$form[0].reset();
        this.validator.resetForm();
        this.$form.find('.has-error').removeClass('has-error');
        if (this.spec.afterReset) {
            this.spec.afterReset.call(this);
        }
    };

    /** Opens the dialog empty, or filled from a table row. */
    ModalForm.prototype.show = function (row) {
        this.reset();
        if (row) {
            this.spec.fill.call(this, row);
        }
        XJ.showModal(this.$modal);
    };

    ModalForm.prototype.submit = function () {
        var self = this;
        var adding = this.adding;
        var $button = this.$form.find(':submit').prop('disabled', true);
        XJ.call(adding ? this.spec.paths.add : this.spec.paths.update, this.spec.data.call(this), {
            failText: adding ? I18n.system_add_fail : I18n.system_update_fail,
            success: function () {
                self.$modal.modal('hide');
                XJ.toast(adding ? I18n.system_add_suc : I18n.system_update_suc, true);
                self.spec.saved(adding);
            }
        }).always(function () {
            $button.prop('disabled', false);
        });
    };

    XJ.ModalForm = ModalForm;

    // ------------------------------------------------------------------------------------------------
    // Tables

    XJ.dataTableLanguage = function () {
        return {
            sProcessing: I18n.dataTable_sProcessing,
            sLengthMenu: I18n.dataTable_sLengthMenu,
            sZeroRecords: I18n.dataTable_sZeroRecords,
            sInfo: I18n.dataTable_sInfo,
            sInfoEmpty: I18n.dataTable_sInfoEmpty,
            sInfoFiltered: I18n.dataTable_sInfoFiltered,
            sInfoPostFix: '',
            sSearch: I18n.dataTable_sSearch,
            sUrl: '',
            sEmptyTable: I18n.dataTable_sEmptyTable,
            sLoadingRecords: I18n.dataTable_sLoadingRecords,
            sInfoThousands: ',',
            oPaginate: {
                sFirst: I18n.dataTable_sFirst,
                sPrevious: I18n.dataTable_sPrevious,
                sNext: I18n.dataTable_sNext,
                sLast: I18n.dataTable_sLast
            },
            oAria: {
                sSortAscending: I18n.dataTable_sSortAscending,
                sSortDescending: I18n.dataTable_sSortDescending
            }
        };
    };

    /** DataTables render function that escapes the cell value. */
    XJ.renderText = function (data) {
        return escapeHtml(data);
    };

    /** An ISO date (the JSON views' format) in the browser's zone, or "". */
    XJ.formatDate = function (value) {
        if (!value) {
            return '';
        }
        var m = window.moment ? window.moment(value) : null;
        return m && m.isValid() ? m.format('YYYY-MM-DD HH:mm:ss') : String(value);
    };

    /**
     * A server-side DataTable on one of the paging endpoints: options.url, options.params() (the filters),
     * options.columns; the rows are answered by recordsTotal / recordsFiltered / data.
     */
    XJ.dataTable = function (selector, options) {
        return $(selector).DataTable($.extend({
            deferRender: true,
            processing: true,
            serverSide: true,
            searching: false,
            ordering: false,
            autoWidth: false,
            lengthMenu: [10, 25, 50, 100],
            pageLength: 10,
            language: XJ.dataTableLanguage(),
            ajax: function (request, callback) {
                var params = $.extend({ start: request.start, length: request.length }, options.params ? options.params() : {});
                var empty = { draw: request.draw, recordsTotal: 0, recordsFiltered: 0, data: [] };
                XJ.request(options.url, params).then(function (answer) {
                    if (answer && $.isArray(answer.data)) {
                        callback({
                            draw: request.draw,
                            recordsTotal: answer.recordsTotal,
                            recordsFiltered: answer.recordsFiltered,
                            data: answer.data
                        });
                    } else {
                        XJ.toast((answer && answer.msg) || I18n.system_api_error, false);
                        callback(empty);
                    }
                }, function (msg) {
                    if (msg !== null) {
                        XJ.toast(msg, false);
                    }
                    callback(empty);
                });
            }
        }, options.extra || {}, { columns: options.columns }));
    };

    // ------------------------------------------------------------------------------------------------
    // Date ranges

    XJ.momentLocale = function () {
        if (!window.moment) {
            return;
        }
        var locale = { zh_CN: 'zh-cn', zh_TC: 'zh-tw', en: 'en' }[XJ.lang] || 'en';
        window.moment.locale(locale);
    };

    /**
     * A daterangepicker on $input: options.start, options.end (moments), options.recentHour (adds that
     * preset), options.onApply(start, end).
     */
    XJ.dateRangePicker = function ($input, options) {
        var moment = window.moment;
        XJ.momentLocale();
        var ranges = {};
        if (options.recentHour) {
            ranges[I18n.daterangepicker_ranges_recent_hour] = [moment().subtract(1, 'hours'), moment()];
        }
        ranges[I18n.daterangepicker_ranges_today] = [moment().startOf('day'), moment().endOf('day')];
        ranges[I18n.daterangepicker_ranges_yesterday] = [moment().subtract(1, 'days').startOf('day'), moment().subtract(1, 'days').endOf('day')];
        ranges[I18n.daterangepicker_ranges_this_month] = [moment().startOf('month'), moment().endOf('month')];
        ranges[I18n.daterangepicker_ranges_last_month] = [moment().subtract(1, 'months').startOf('month'), moment().subtract(1, 'months').endOf('month')];
        ranges[I18n.daterangepicker_ranges_recent_week] = [moment().subtract(1, 'weeks').startOf('day'), moment().endOf('day')];
        ranges[I18n.daterangepicker_ranges_recent_month] = [moment().subtract(1, 'months').startOf('day'), moment().endOf('day')];
        var format = 'YYYY-MM-DD HH:mm:ss';
        $input.daterangepicker({
            autoApply: false,
            opens: options.opens || 'left',
            ranges: ranges,
            startDate: options.start,
            endDate: options.end,
            timePicker: true,
            timePicker24Hour: true,
            timePickerIncrement: 10,
            showCustomRangeLabel: true,
            alwaysShowCalendars: false,
            locale: {
                format: format,
                separator: ' - ',
                applyLabel: I18n.system_ok,
                cancelLabel: I18n.system_cancel,
                fromLabel: I18n.daterangepicker_custom_starttime,
                toLabel: I18n.daterangepicker_custom_endtime,
                customRangeLabel: I18n.daterangepicker_custom_name,
                daysOfWeek: String(I18n.daterangepicker_custom_daysofweek || '').split(','),
                monthNames: String(I18n.daterangepicker_custom_monthnames || '').split(','),
                firstDay: 1
            }
        }, function (start, end) {
            if (options.onApply) {
                options.onApply(start, end);
            }
        });
        $input.val(options.start.format(format) + ' - ' + options.end.format(format));
        return $input.data('daterangepicker');
    };

    // ------------------------------------------------------------------------------------------------
    // Layout behaviour

    var SIDEBAR_COOKIE = 'xxljob_adminlte_settings';

    function initSidebarCookie() {
        $(document).on('collapsed.pushMenu expanded.pushMenu', function (event) {
            if ($.cookie) {
                $.cookie(SIDEBAR_COOKIE, event.type === 'collapsed' ? 'off' : 'on', { expires: 7, path: baseUrl || '/' });
            }
        });
    }

    function initBackToTop() {
        var $button = $('#backToTop');
        if (!$button.length) {
            return;
        }
        $(window).on('scroll', function () {
            $button.toggleClass('visible', $(window).scrollTop() > 150);
        });
        $button.on('click', function (e) {
            e.preventDefault();
            $('html, body').animate({ scrollTop: 0 }, 300);
        });
    }

    function logout() {
        XJ.request('/logout', {}).always(function () {
            XJ.goLogin();
        });
    }

    function initUserMenu() {
        $('#logoutBtn').on('click', function (e) {
            e.preventDefault();
            XJ.confirm(I18n.logout_confirm, function () {
                XJ.request('/logout', {}).then(function (answer) {
                    if (answer && answer.code === 200) {
                        XJ.toast(I18n.logout_success, true, XJ.goLogin);
                    } else {
                        XJ.alertError((answer && answer.msg) || I18n.logout_fail);
                    }
                }, function (msg) {
                    if (msg !== null) {
                        XJ.alertError(msg);
                    }
                });
            });
        });

        var $modal = $('#updatePwdModal');
        var $form = $('#updatePwdForm');
        if (!$form.length) {
            return;
        }
        // The default-password warning opens the same dialog.
        $('#changePwdBtn, #defaultPasswordChange').on('click', function (e) {
            e.preventDefault();
            XJ.showModal($modal, $form);
        });
        var lengthText = I18n.system_lengh_limit + '[4-20]';
        XJ.validate($form, {
            rules: {
                oldPassword: { required: true, rangelength: [4, 20] },
                password: { required: true, rangelength: [4, 20] }
            },
            messages: {
                oldPassword: {
                    required: I18n.system_please_input + I18n.change_pwd_field_oldpwd,
                    rangelength: lengthText
                },
                password: {
                    required: I18n.system_please_input + I18n.change_pwd_field_newpwd,
                    rangelength: lengthText
                }
            }
        }, function () {
            XJ.call('/user/updatePwd', XJ.formData($form, ['oldPassword', 'password']), {
                success: function () {
                    $modal.modal('hide');
                    XJ.alertOk(I18n.change_pwd_suc_to_logout, logout);
                }
            });
        });
    }

    function pad2(n) {
        return (n < 10 ? '0' : '') + n;
    }

    /** `yyyy-MM-dd HH:mm:ss` of the browser's clock `days` days from now. */
    function daysFromNow(days) {
        var d = new Date(Date.now() + days * 86400000);
        return d.getFullYear() + '-' + pad2(d.getMonth() + 1) + '-' + pad2(d.getDate()) + ' ' +
            pad2(d.getHours()) + ':' + pad2(d.getMinutes()) + ':' + pad2(d.getSeconds());
    }

    /** The personal API token dialog: the new token is shown once, then only its expiry remains known. */
    function initApiTokens() {
        var $modal = $('#apiTokenModal');
        var $form = $('#apiTokenForm');
        if (!$form.length) {
            return;
        }
        var $result = $('#apiTokenResult');
        var $submit = $('#apiTokenSubmit');
        $('#apiTokenBtn').on('click', function (e) {
            e.preventDefault();
            $result.hide();
            $('#apiTokenValue').val('');
            $form.find('.form-group').show();
            $submit.show();
            XJ.showModal($modal, $form);
        });
        // Scripts need the absolute address; the page knows only its path.
        var $base = $('#apiTokenBase');
        $base.text(window.location.origin + $base.data('path'));
        $('#apiTokenCopy').on('click', function () {
            var token = $('#apiTokenValue').val();
            if (navigator.clipboard && window.isSecureContext) {
                navigator.clipboard.writeText(token);
            } else {
                // Plain http: the clipboard API is unavailable, the selection still copies.
                $('#apiTokenValue').trigger('focus').trigger('select');
                document.execCommand('copy');
            }
        });
        $modal.on('hidden.bs.modal', function () {
            $('#apiTokenValue').val('');
        });
        $form.on('submit', function (e) {
            e.preventDefault();
            var days = parseInt($('#apiTokenDays').val(), 10);
            var data = days > 0 ? { expireTime: daysFromNow(days) } : {};
            XJ.call('/user/apiToken', data, {
                success: function (content) {
                    $form.find('.form-group').hide();
                    $submit.hide();
                    $('#apiTokenValue').val(content.token);
                    $('#apiTokenExpiry').text(I18n.api_token_expire + ': ' + (content.expireTime || I18n.api_token_expire_never));
                    $result.show();
                    $('#apiTokenValue').trigger('focus').trigger('select');
                }
            });
        });
    }

    $(function () {
        if (window.FastClick && document.body) {
            window.FastClick.attach(document.body);
        }
        initSidebarCookie();
        initBackToTop();
        initUserMenu();
        initApiTokens();
    });
})(typeof window !== 'undefined' ? window : globalThis, typeof window !== 'undefined' ? window.jQuery : undefined);
