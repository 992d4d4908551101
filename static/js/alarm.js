/* Alarm channels: the test button of each configured webhook channel. */
$(function () {
    'use strict';

    $('#alarm_channels').on('click', '.xj-alarm-test', function () {
        var $button = $(this);
        // One test at a time per channel: a slow endpoint takes up to its timeout, three times.
        $button.prop('disabled', true);
        XJ.call('/alarm/test', { name: $button.data('name') }, {
            success: function (content, answer) {
                XJ.alertOk(answer.msg);
            }
        }).always(function () {
            $button.prop('disabled', false);
        });
    });
});
