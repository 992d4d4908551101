/*
 * Rolling log console: pulls /joblog/logDetailCat from line 1 on, appends every new chunk, and keeps
 * polling every 3 s until the executor says the log has ended, the run was never triggered, or too many
 * pulls in a row bring nothing new.
 */
$(function () {
    'use strict';

    var POLL_MS = 3000;
    var MAX_IDLE_PULLS = 20;

    var $detail = $('#logDetail');
    var $console = $('#logConsole');
    var $running = $('#logConsoleRunning');
    var logId = $detail.attr('data-log-id');
    var triggerCode = parseInt($detail.attr('data-trigger-code'), 10);
    var handleCode = parseInt($detail.attr('data-handle-code'), 10);

    var fromLineNum = 1;
    var idlePulls = 0;
    var timer = null;
    var stopped = false;
    var busy = false;

    $('#logRefresh').on('click', function (e) {
        e.preventDefault();
        window.location.reload();
    });

    function scrollToEnd() {
        $('html, body').scrollTop($(document).height());
    }

    /** Appends plain text (never markup) to the console. */
    function appendText(text, className) {
        if (className) {
            $('<span>').addClass(className).text(text).appendTo($console);
        } else {
            $console.append(document.createTextNode(text));
        }
    }

    function stop(text, className) {
        stopped = true;
        if (timer) {
            clearInterval(timer);
            timer = null;
        }
        $running.hide();
        if (text) {
            appendText('\n' + text + '\n', className);
            scrollToEnd();
        }
    }

    function pull() {
        if (stopped || busy) {
            return;
        }
        if (idlePulls > MAX_IDLE_PULLS) {
            stop(I18n.joblog_rolling_log_failoften, 'xj-log-fail');
            return;
        }
        idlePulls += 1;
        busy = true;
        XJ.request('/joblog/logDetailCat', { logId: logId, fromLineNum: fromLineNum }).then(function (answer) {
            busy = false;
            if (stopped || !answer || answer.code !== 200 || !answer.content) {
                return;
            }
            var content = answer.content;
            if (content.fromLineNum !== fromLineNum) {
                return;
            }
            if (fromLineNum > content.toLineNum) {
                if (content.end) {
                    stop(XJ.t('log_console_rolling_finish'), 'xj-log-end');
                }
                return;
            }
            // The server sends the content HTML-escaped: undo exactly that, then let only the line breaks
            // (Java executors write `<br>` around their start/end markers) and banner spans through.
            $console.append(sanitizeMessage(unescapeHtml(content.logContent || '')));
            fromLineNum = content.toLineNum + 1;
            idlePulls = 0;
            scrollToEnd();
        }, function () {
            busy = false;
        });
    }

    if (!(triggerCode === 200 || handleCode !== 0)) {
        stop(I18n.joblog_rolling_log_triggerfail, 'xj-log-fail');
        return;
    }

    pull();
    if (handleCode > 0) {
        // Finished before the page was opened: one pull brings the whole log.
        var waitFirst = setInterval(function () {
            if (!busy) {
                clearInterval(waitFirst);
                if (!stopped) {
                    stop(XJ.t('log_console_finish'), 'xj-log-end');
                }
            }
        }, 100);
        return;
    }
    timer = setInterval(pull, POLL_MS);
});
