/* Dashboard: the scheduling report charts, fed by /chartInfo for the chosen date range. */
$(function () {
    'use strict';

    var COLORS = { success: '#00A65A', fail: '#c23632', running: '#F39C12' };
    var FORMAT = 'YYYY-MM-DD HH:mm:ss';
    var lineChart = echarts.init(document.getElementById('lineChart'));
    var pieChart = echarts.init(document.getElementById('pieChart'));

    $(window).on('resize', function () {
        lineChart.resize();
        pieChart.resize();
    });
    // The sidebar animation changes the content width.
    $(document).on('collapsed.pushMenu expanded.pushMenu', function () {
        setTimeout(function () {
            lineChart.resize();
            pieChart.resize();
        }, 350);
    });

    function drawLine(data) {
        lineChart.setOption({
            color: [COLORS.success, COLORS.fail, COLORS.running],
            tooltip: { trigger: 'axis', axisPointer: { type: 'line' } },
            legend: { data: [I18n.joblog_status_suc, I18n.joblog_status_fail, I18n.joblog_status_running] },
            grid: { left: 16, right: 40, bottom: 12, top: 40, containLabel: true },
            xAxis: [{ type: 'category', boundaryGap: false, data: data.triggerDayList || [] }],
            yAxis: [{ type: 'value', minInterval: 1 }],
            series: [
                {
                    name: I18n.joblog_status_suc,
                    type: 'line',
                    stack: 'total',
                    smooth: true,
                    areaStyle: { normal: { opacity: 0.35 } },
                    data: data.triggerDayCountSucList || []
                },
                {
                    name: I18n.joblog_status_fail,
                    type: 'line',
                    stack: 'total',
                    smooth: true,
                    label: { normal: { show: true, position: 'top' } },
                    areaStyle: { normal: { opacity: 0.35 } },
                    data: data.triggerDayCountFailList || []
                },
                {
                    name: I18n.joblog_status_running,
                    type: 'line',
                    stack: 'total',
                    smooth: true,
                    areaStyle: { normal: { opacity: 0.35 } },
                    data: data.triggerDayCountRunningList || []
                }
            ]
        }, true);
    }

    function drawPie(data) {
        var success = data.triggerCountSucTotal || 0;
        var fail = data.triggerCountFailTotal || 0;
        var running = data.triggerCountRunningTotal || 0;
        if (success + fail + running === 0) {
            // Three zero slices would be drawn as equal thirds labelled 0 %: say there is nothing instead.
            pieChart.setOption({
                graphic: [{
                    type: 'text',
                    id: 'empty',
                    left: 'center',
                    top: 'middle',
                    style: { text: I18n.job_dashboard_report_empty, fill: '#999', font: '14px sans-serif' }
                }]
            }, true);
            $('#pieChart').attr('data-empty', 'true');
            return;
        }
        $('#pieChart').attr('data-empty', 'false');
        pieChart.setOption({
            color: [COLORS.success, COLORS.fail, COLORS.running],
            tooltip: { trigger: 'item', formatter: '{b}: {c} ({d}%)' },
            legend: { orient: 'horizontal', bottom: 0, data: [I18n.joblog_status_suc, I18n.joblog_status_fail, I18n.joblog_status_running] },
            series: [{
                name: I18n.job_dashboard_rate_report,
                type: 'pie',
                radius: ['0%', '62%'],
                center: ['50%', '46%'],
                label: { normal: { formatter: '{b}\n{d}%' } },
                data: [
                    { name: I18n.joblog_status_suc, value: success },
                    { name: I18n.joblog_status_fail, value: fail },
                    { name: I18n.joblog_status_running, value: running }
                ]
            }]
        }, true);
    }

    function load(start, end) {
        XJ.call('/chartInfo', { startDate: start.format(FORMAT), endDate: end.format(FORMAT) }, {
            failText: I18n.job_dashboard_report_loaddata_fail,
            success: function (content) {
                content = content || {};
                drawLine(content);
                drawPie(content);
            }
        });
    }

    var start = moment().subtract(1, 'weeks').startOf('day');
    var end = moment().endOf('day');
    XJ.dateRangePicker($('#filterTime'), {
        start: start,
        end: end,
        onApply: load
    });
    load(start, end);
});
