/*
 * A small cron expression builder for the job dialog.
 *
 * CronGen.attach($input, $holder, options) puts a panel into $holder with one tab per field (second,
 * minute, hour, day of month, month, day of week, year). Each tab offers the forms Quartz accepts for that
 * field: every (*), not specified (?), a range a-b, a start/step a/b, a list of specific values, and for
 * the day fields L, nW, d#k and dL. Every change rewrites $input and refreshes the next run times through
 * /jobinfo/nextTriggerTime. Typing into $input parses the expression back into the controls.
 *
 * Pure helpers (parse / build) are exported for Node as well.
 */
(function (root) {
    'use strict';

    var MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
    var WEEK_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
    /** Where the builder starts when the Cron field is empty: every day at midnight. */
    var DEFAULT_EXPRESSION = '0 0 0 * * ?';

    /** Field definitions: value range and the forms offered, in display order. */
    function fieldDefs(currentYear) {
        return [
            { key: 'second', min: 0, max: 59, modes: ['every', 'range', 'step', 'list'] },
            { key: 'minute', min: 0, max: 59, modes: ['every', 'range', 'step', 'list'] },
            { key: 'hour', min: 0, max: 23, modes: ['every', 'range', 'step', 'list'] },
            { key: 'day', min: 1, max: 31, modes: ['every', 'none', 'range', 'step', 'nearest', 'last', 'list'] },
            { key: 'month', min: 1, max: 12, modes: ['every', 'range', 'step', 'list'], names: MONTH_NAMES },
            { key: 'week', min: 1, max: 7, modes: ['none', 'every', 'range', 'nth', 'lastof', 'list'], names: WEEK_NAMES },
            { key: 'year', min: currentYear, max: 2099, modes: ['omit', 'every', 'range'] }
        ];
    }

    /** A number, or a Quartz name (JAN, MON, …) when the field has names; NaN otherwise. */
    function toNumber(text, def) {
        if (/^\d+$/.test(text)) {
            return parseInt(text, 10);
        }
        if (def.names) {
            var index = def.names.indexOf(String(text).toUpperCase());
            if (index >= 0) {
                return index + 1;
            }
        }
        return NaN;
    }

    /**
     * Parses one field into a state {mode, a, b, list}; null when the text uses a form the builder cannot
     * show (the expression is then kept as typed).
     */
    function parseField(text, def) {
        var m;
        if (text === undefined || text === '') {
            return def.modes.indexOf('omit') >= 0 ? { mode: 'omit' } : null;
        }
        if (text === '*') {
            return { mode: 'every' };
        }
        if (text === '?') {
            return def.modes.indexOf('none') >= 0 ? { mode: 'none' } : null;
        }
        if (def.key === 'day' && text === 'L') {
            return { mode: 'last' };
        }
        if (def.key === 'day' && (m = /^(\d+)W$/.exec(text))) {
            return { mode: 'nearest', a: parseInt(m[1], 10) };
        }
        if (def.key === 'week' && (m = /^(\w+)#(\d)$/.exec(text))) {
            var weekday = toNumber(m[1], def);
            return isNaN(weekday) ? null : { mode: 'nth', a: parseInt(m[2], 10), b: weekday };
        }
        if (def.key === 'week' && (m = /^(\w+)L$/.exec(text))) {
            var last = toNumber(m[1], def);
            return isNaN(last) ? null : { mode: 'lastof', a: last };
        }
        if ((m = /^(\w+)-(\w+)$/.exec(text))) {
            var from = toNumber(m[1], def);
            var to = toNumber(m[2], def);
            return isNaN(from) || isNaN(to) ? null : { mode: 'range', a: from, b: to };
        }
        if ((m = /^(\*|\w+)\/(\d+)$/.exec(text)) && def.modes.indexOf('step') >= 0) {
            var start = m[1] === '*' ? def.min : toNumber(m[1], def);
            return isNaN(start) ? null : { mode: 'step', a: start, b: parseInt(m[2], 10) };
        }
        if (/^\w+(,\w+)*$/.test(text) && def.modes.indexOf('list') >= 0) {
            var values = [];
            var parts = text.split(',');
            for (var i = 0; i < parts.length; i++) {
                var value = toNumber(parts[i], def);
                if (isNaN(value)) {
                    return null;
                }
                values.push(value);
            }
            return { mode: 'list', list: values };
        }
        return null;
    }

    /** Parses an expression into one state per field; null for an expression the builder cannot show. */
    function parse(expression, currentYear) {
        var defs = fieldDefs(currentYear);
        var parts = String(expression || '').trim().split(/\s+/);
        if (parts.length < 6 || parts.length > 7) {
            return null;
        }
        var states = {};
        for (var i = 0; i < defs.length; i++) {
            var state = parseField(parts[i], defs[i]);
            if (!state) {
                return null;
            }
            states[defs[i].key] = state;
        }
        return states;
    }

    /** One field's text from its state. */
    function buildField(state, def) {
        switch (state.mode) {
            case 'every': return '*';
            case 'none': return '?';
            case 'omit': return '';
            case 'range': return state.a + '-' + state.b;
            case 'step': return state.a + '/' + state.b;
            case 'nearest': return state.a + 'W';
            case 'last': return 'L';
            case 'nth': return state.b + '#' + state.a;
            case 'lastof': return state.a + 'L';
            case 'list':
                var list = (state.list || []).slice().sort(function (x, y) { return x - y; });
                return list.length ? list.join(',') : String(def.min);
            default: return '*';
        }
    }

    /** The expression of a set of field states: `sec min hour day month week [year]`. */
    function build(states, currentYear) {
        var defs = fieldDefs(currentYear);
        var parts = [];
        for (var i = 0; i < defs.length; i++) {
            var text = buildField(states[defs[i].key] || { mode: defs[i].modes[0] }, defs[i]);
            if (text !== '') {
                parts.push(text);
            }
        }
        return parts.join(' ');
    }

    var CronGen = { parse: parse, build: build, fieldDefs: fieldDefs, DEFAULT_EXPRESSION: DEFAULT_EXPRESSION };

    if (typeof module !== 'undefined' && module.exports) {
        module.exports = CronGen;
    }
    if (!root || !root.jQuery) {
        return;
    }

    var $ = root.jQuery;
    var esc = root.escapeHtml;
    var instances = 0;

    function t(key, vars) {
        return root.XJ.t(key, vars);
    }

    /** Labels of the values of a field (month and weekday names from the date picker's lists). */
    function valueLabel(def, value) {
        var I18n = root.I18n || {};
        if (def.key === 'week') {
            var days = String(I18n.daterangepicker_custom_daysofweek || '').split(',');
            return days[value - 1] || String(value);
        }
        if (def.key === 'month') {
            var months = String(I18n.daterangepicker_custom_monthnames || '').split(',');
            return months[value - 1] || String(value);
        }
        return value < 10 && def.max >= 10 ? '0' + value : String(value);
    }

    function numberInput(def, role, value) {
        return '<input type="number" class="cron-num" data-role="' + role + '" min="' + def.min + '" max="' + def.max +
            '" value="' + esc(value) + '">';
    }

    function valueSelect(def, role, value) {
        var html = '<select class="cron-num" data-role="' + role + '">';
        for (var v = def.min; v <= def.max; v++) {
            html += '<option value="' + v + '"' + (v === value ? ' selected' : '') + '>' + esc(valueLabel(def, v)) + '</option>';
        }
        return html + '</select>';
    }

    /** A value control: a select for named fields (month, weekday), a number input otherwise. */
    function valueControl(def, role, value) {
        return def.names ? valueSelect(def, role, value) : numberInput(def, role, value);
    }

    function modeLine(name, mode, inner) {
        return '<div class="radio"><label><input type="radio" name="' + name + '" value="' + mode + '"> ' + inner + '</label></div>';
    }

    function renderTab(def, name) {
        var unit = t('cron_tab_' + def.key);
        var unitWord = root.XJ.lang === 'en' ? unit.toLowerCase() : unit;
        var html = '';
        for (var i = 0; i < def.modes.length; i++) {
            var mode = def.modes[i];
            switch (mode) {
                case 'every':
                    html += modeLine(name, mode, esc(t('cron_every', { unit: unitWord })) + ' <code>*</code>');
                    break;
                case 'none':
                case 'omit':
                    html += modeLine(name, mode, esc(t('cron_not_specified')) + (mode === 'none' ? ' <code>?</code>' : ''));
                    break;
                case 'range':
                    html += modeLine(name, mode, esc(t('cron_range')) + ' ' + valueControl(def, 'range-a', def.min) + ' ' +
                        esc(t('cron_range_to')) + ' ' + valueControl(def, 'range-b', Math.min(def.min + 1, def.max)));
                    break;
                case 'step':
                    html += modeLine(name, mode, esc(t('cron_step')) + ' ' + valueControl(def, 'step-a', def.min) + ' ' +
                        esc(t('cron_step_every')) + ' ' + numberInput({ min: 1, max: def.max }, 'step-b', 1) + ' ' +
                        esc(t('cron_step_unit', { unit: unitWord })));
                    break;
                case 'nearest':
                    html += modeLine(name, mode, esc(t('cron_nearest_weekday')) + ' ' + numberInput(def, 'nearest-a', 1) + ' ' +
                        esc(t('cron_nearest_weekday_suffix')) + ' <code>W</code>');
                    break;
                case 'last':
                    html += modeLine(name, mode, esc(t('cron_last_day')) + ' <code>L</code>');
                    break;
                case 'nth':
                    html += modeLine(name, mode, esc(t('cron_nth_weekday')) + ' ' + numberInput({ min: 1, max: 5 }, 'nth-a', 1) + ' ' +
                        esc(t('cron_nth_weekday_mid')) + ' ' + valueSelect(def, 'nth-b', 2) + ' <code>#</code>');
                    break;
                case 'lastof':
                    html += modeLine(name, mode, esc(t('cron_last_weekday')) + ' ' + valueSelect(def, 'lastof-a', 6) + ' <code>L</code>');
                    break;
                case 'list':
                    html += modeLine(name, mode, esc(t('cron_specific')));
                    html += '<div class="xj-cron-values' + (def.names ? ' xj-cron-wide' : '') + '">';
                    for (var v = def.min; v <= def.max; v++) {
                        html += '<label><input type="checkbox" class="cron-value" value="' + v + '"> ' + esc(valueLabel(def, v)) + '</label>';
                    }
                    html += '</div>';
                    break;
            }
        }
        return html;
    }

    function Builder($input, $holder, options) {
        this.$input = $input;
        this.$holder = $holder;
        this.options = options || {};
        this.id = 'cron' + (++instances);
        this.year = new Date().getFullYear();
        this.defs = fieldDefs(this.year);
        this.timer = null;
        this.pending = null;
        this.render();
        this.bind();
    }

    Builder.prototype.render = function () {
        var self = this;
        var tabs = '<ul class="nav nav-tabs" role="tablist">';
        var panes = '<div class="tab-content">';
        $.each(this.defs, function (i, def) {
            var paneId = self.id + '-' + def.key;
            tabs += '<li' + (i === 0 ? ' class="active"' : '') + '><a href="#' + paneId + '" data-toggle="tab" role="tab">' +
                esc(t('cron_tab_' + def.key)) + '</a></li>';
            panes += '<div class="tab-pane' + (i === 0 ? ' active' : '') + ' cron-field" id="' + paneId + '" data-field="' + def.key + '">' +
                renderTab(def, paneId + '-mode') + '</div>';
        });
        tabs += '</ul>';
        panes += '</div>';
        var html = '<div class="xj-cron-panel">' + tabs + panes +
            '<div class="xj-cron-result">' + esc(t('cron_expression')) + ': <code class="cron-expression"></code></div>' +
            '<div class="xj-cron-result">' + esc(t('cron_next_times')) + ':</div>' +
            '<pre class="xj-cron-times cron-next-times"></pre></div>';
        this.$holder.html(html);
    };

    Builder.prototype.pane = function (key) {
        return this.$holder.find('.cron-field[data-field="' + key + '"]');
    };

    /** Reads one field's state from its controls. */
    Builder.prototype.readField = function (def) {
        var $pane = this.pane(def.key);
        var mode = $pane.find('input[type="radio"]:checked').val() || def.modes[0];
        var num = function (role, fallback) {
            var value = parseInt($pane.find('[data-role="' + role + '"]').val(), 10);
            return isNaN(value) ? fallback : value;
        };
        switch (mode) {
            case 'range': return { mode: mode, a: num('range-a', def.min), b: num('range-b', def.max) };
            case 'step': return { mode: mode, a: num('step-a', def.min), b: Math.max(1, num('step-b', 1)) };
            case 'nearest': return { mode: mode, a: num('nearest-a', 1) };
            case 'nth': return { mode: mode, a: num('nth-a', 1), b: num('nth-b', 2) };
            case 'lastof': return { mode: mode, a: num('lastof-a', 6) };
            case 'list':
                var list = [];
                $pane.find('.cron-value:checked').each(function () {
                    list.push(parseInt(this.value, 10));
                });
                return { mode: mode, list: list };
            default: return { mode: mode };
        }
    };

    /** Puts one field's state into its controls. */
    Builder.prototype.writeField = function (def, state) {
        var $pane = this.pane(def.key);
        $pane.find('input[type="radio"][value="' + state.mode + '"]').prop('checked', true);
        var set = function (role, value) {
            if (value !== undefined) {
                $pane.find('[data-role="' + role + '"]').val(value);
            }
        };
        $pane.find('.cron-value').prop('checked', false);
        switch (state.mode) {
            case 'range': set('range-a', state.a); set('range-b', state.b); break;
            case 'step': set('step-a', state.a); set('step-b', state.b); break;
            case 'nearest': set('nearest-a', state.a); break;
            case 'nth': set('nth-a', state.a); set('nth-b', state.b); break;
            case 'lastof': set('lastof-a', state.a); break;
            case 'list':
                $.each(state.list || [], function (i, value) {
                    $pane.find('.cron-value[value="' + value + '"]').prop('checked', true);
                });
                break;
        }
        // A single value the user did not tick here (the starting expression's 0, a typed one) stands in
        // until the user ticks another: ticking minute 30 in '0 0 0 * * ?' means 30, not 0 and 30.
        $pane.data('provisional', state.mode === 'list' && (state.list || []).length === 1);
    };

    Builder.prototype.readAll = function () {
        var states = {};
        var self = this;
        $.each(this.defs, function (i, def) {
            states[def.key] = self.readField(def);
        });
        return states;
    };

    /**
     * Loads the input's expression into the controls. An empty input starts from DEFAULT_EXPRESSION, put
     * into the input as well, so what the controls show is a valid schedule; an expression the controls
     * cannot show is kept as typed.
     */
    Builder.prototype.load = function () {
        var self = this;
        if (!$.trim(this.$input.val())) {
            this.$input.val(DEFAULT_EXPRESSION).trigger('cron:change');
        }
        var states = parse(this.$input.val(), this.year) || parse(DEFAULT_EXPRESSION, this.year);
        $.each(this.defs, function (i, def) {
            self.writeField(def, states[def.key]);
        });
        this.$holder.find('.cron-expression').text(this.$input.val());
        this.refreshTimes();
    };

    /** Shows the server's verdict on the expression beside the Cron field; none hides it. */
    Builder.prototype.showError = function (text) {
        var $error = this.options.$error;
        if ($error) {
            $error.text(text || '').toggle(!!text);
        }
    };

    /** Keeps exactly one of day-of-month / day-of-week at "?", as Quartz requires. */
    Builder.prototype.balanceDays = function (changed) {
        var day = this.defs[3];
        var week = this.defs[5];
        var dayState = this.readField(day);
        var weekState = this.readField(week);
        if (changed === 'day') {
            if (dayState.mode !== 'none' && weekState.mode !== 'none') {
                this.writeField(week, { mode: 'none' });
            } else if (dayState.mode === 'none' && weekState.mode === 'none') {
                this.writeField(week, { mode: 'every' });
            }
        } else if (changed === 'week') {
            if (weekState.mode !== 'none' && dayState.mode !== 'none') {
                this.writeField(day, { mode: 'none' });
            } else if (weekState.mode === 'none' && dayState.mode === 'none') {
                this.writeField(day, { mode: 'every' });
            }
        }
    };

    Builder.prototype.generate = function (changed) {
        this.balanceDays(changed);
        var expression = build(this.readAll(), this.year);
        this.$input.val(expression).trigger('cron:change');
        this.$holder.find('.cron-expression').text(expression);
        this.refreshTimes();
    };

    Builder.prototype.refreshTimes = function () {
        var self = this;
        clearTimeout(this.timer);
        this.timer = setTimeout(function () {
            var expression = $.trim(self.$input.val());
            var $times = self.$holder.find('.cron-next-times');
            if (!expression) {
                $times.removeClass('text-red').text(t('cron_empty_result'));
                self.showError(null);
                return;
            }
            var request = root.XJ.request('/jobinfo/nextTriggerTime', { scheduleType: 'CRON', scheduleConf: expression });
            self.pending = request;
            request.then(function (answer) {
                if (self.pending !== request) {
                    return;
                }
                if (answer && answer.code === 200) {
                    var list = answer.content || [];
                    $times.removeClass('text-red').text(list.length ? list.join('\n') : t('cron_empty_result'));
                    self.showError(null);
                } else {
                    var error = (answer && answer.msg) || root.I18n.system_api_error;
                    $times.addClass('text-red').text(error);
                    self.showError(error);
                }
            }, function (msg) {
                if (msg !== null && self.pending === request) {
                    $times.addClass('text-red').text(msg);
                    self.showError(msg);
                }
            });
        }, 250);
    };

    Builder.prototype.bind = function () {
        var self = this;
        this.$holder.on('change input', 'input, select', function () {
            var $pane = $(this).closest('.cron-field');
            var key = $pane.attr('data-field');
            var provisional = $pane.data('provisional');
            $pane.data('provisional', false);
            // Touching a value control selects its form.
            if (!$(this).is(':radio')) {
                var $radio = $(this).closest('.radio').find('input[type="radio"]');
                if ($(this).hasClass('cron-value')) {
                    $radio = $pane.find('input[type="radio"][value="list"]');
                    if (this.checked && (provisional || !$radio.is(':checked'))) {
                        $pane.find('.cron-value').not(this).prop('checked', false);
                    }
                }
                $radio.prop('checked', true);
            } else if (this.value === 'list' && !$pane.find('.cron-value:checked').length) {
                // An empty list is no expression: the first value stands in until the user ticks one.
                $pane.find('.cron-value').first().prop('checked', true);
                $pane.data('provisional', true);
            }
            self.generate(key);
        });
        this.$input.on('input', function () {
            var states = parse(self.$input.val(), self.year);
            if (states) {
                $.each(self.defs, function (i, def) {
                    self.writeField(def, states[def.key]);
                });
            }
            self.$holder.find('.cron-expression').text(self.$input.val());
            self.refreshTimes();
        });
    };

    /**
     * Attaches a builder; options.$error is where an invalid expression is reported. Returns an object
     * with load() (re-read the input), refresh() and clearError() (for a form being reset).
     */
    CronGen.attach = function ($input, $holder, options) {
        var builder = new Builder($input, $holder, options);
        return {
            load: function () { builder.load(); },
            refresh: function () { builder.refreshTimes(); },
            clearError: function () {
                clearTimeout(builder.timer);
                builder.pending = null;
                builder.showError(null);
            }
        };
    };

    root.CronGen = CronGen;
})(typeof window !== 'undefined' ? window : undefined);
