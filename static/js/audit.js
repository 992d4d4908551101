/* Audit trail: the admin's audit file, newest first, filtered by time, user, kind and text. */
$(function () {
    'use strict';

    var esc = escapeHtml;

    /** What an event is about, as one line: type, name and id. */
    function target(value) {
        if (!value) {
            return '';
        }
        var id = value.id === undefined ? '' : shown(value.id, 'id');
        return esc(value.type) + (value.name ? ' <b>' + esc(value.name) + '</b>' : '') + (id ? ' <small>#' + esc(id) + '</small>' : '');
    }

    /** Epoch milliseconds from 2001 on: the job rows' *Time fields store instants so. */
    var EPOCH_MS_FLOOR = 1e12;

    /**
     * A changed value as the other pages show values: instants of *Time fields as local
     * yyyy-MM-dd HH:mm:ss, lists and objects as their items, not as JSON.
     */
    function shown(value, name) {
        if (value === null || value === undefined || value === '') {
            return '∅';
        }
        if (typeof value === 'number' && /time$/i.test(name) && value >= EPOCH_MS_FLOOR) {
            return moment(value).format('YYYY-MM-DD HH:mm:ss');
        }
        if ($.isArray(value)) {
            return value.length ? value.map(function (item) { return shown(item, name); }).join(', ') : '∅';
        }
        if (typeof value === 'object') {
            return Object.keys(value).map(function (key) { return key + ': ' + shown(value[key], key); }).join(', ');
        }
        return String(value);
    }

    /** The changed fields, one per line: name, before → after. */
    function changes(value) {
        if (!value) {
            return '';
        }
        return Object.keys(value).map(function (name) {
            var pair = value[name] || {};
            return '<div class="xj-audit-change"><code>' + esc(name) + '</code> ' + esc(shown(pair.before, name)) +
                ' → ' + esc(shown(pair.after, name)) + '</div>';
        }).join('');
    }

    /** The event's time as written by the admin (its own zone), to the second like every other page. */
    function time(value) {
        var at = moment.parseZone(value);
        return at.isValid() ? '<span title="' + esc(value) + '">' + esc(at.format('YYYY-MM-DD HH:mm:ss')) + '</span>' : esc(value);
    }

    var labels = { success: 'label-success', refused: 'label-danger', failure: 'label-warning' };

    // Before the table, whose first request sends the range shown.
    XJ.dateRangePicker($('#filterTime'), {
        start: moment().subtract(1, 'weeks').startOf('day'),
        end: moment().endOf('day'),
        recentHour: true,
        onApply: function () {
            setTimeout(function () {
                table.draw();
            }, 0);
        }
    });

    var table = XJ.dataTable('#audit_list', {
        url: '/audit/pageList',
        params: function () {
            return {
                filterTime: $('#filterTime').val(),
                user: $('#auditUser').val(),
                kind: $('#auditKind').val(),
                text: $('#auditText').val()
            };
        },
        columns: [
            { data: 'time', className: 'xj-nowrap', render: time },
            {
                data: 'actor',
                className: 'xj-nowrap',
                render: function (actor) {
                    actor = actor || {};
                    var token = actor.tokenId ? ' <small>(token ' + esc(actor.tokenId) + ')</small>' : '';
                    return esc(actor.userName) + ' <small class="text-muted">' + esc(actor.via) + '</small>' + token;
                }
            },
            { data: 'address', className: 'xj-nowrap', render: XJ.renderText },
            {
                data: 'kind',
                className: 'xj-nowrap',
                render: function (kind, type, row) {
                    return esc(kind) + (row.method ? ' <small>(' + esc(row.method) + ')</small>' : '');
                }
            },
            { data: 'target', render: target },
            {
                data: 'outcome',
                className: 'xj-nowrap',
                render: function (outcome, type, row) {
                    var label = '<span class="label ' + (labels[outcome] || 'label-default') + '">' + esc(outcome) + '</span>';
                    return label + (row.message ? ' <small>' + esc(row.message) + '</small>' : '');
                }
            },
            { data: 'changes', render: changes }
        ]
    });

    $('#searchBtn').on('click', function () {
        table.draw();
    });
    $('#auditKind').on('change', function () {
        table.draw();
    });
    $('#auditUser, #auditText').on('keydown', function (e) {
        if (e.which === 13) {
            table.draw();
        }
    });
});
