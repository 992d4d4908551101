/*
 * The job dependency graph: which job starts which through its child job ids, each job coloured by its
 * last run's result; a click opens the job's trigger log. Jobs without links are left out unless asked.
 */
$(function () {
    'use strict';

    var RESULTS = ['success', 'failed', 'running', 'none'];
    var view = null;

    XJ.dagLegend($('#jobGraphLegend'), RESULTS, function (r) { return I18n['jobgraph_result_' + r]; });

    function draw(graph) {
        var linked = {};
        graph.links.forEach(function (l) {
            linked[l[0]] = true;
            linked[l[1]] = true;
        });
        var only = $('#linkedOnly').is(':checked');
        var jobs = graph.jobs.filter(function (j) { return !only || linked[j.id]; });
        $('#jobGraphEmpty').toggle(jobs.length === 0);
        $('#jobGraph').toggle(jobs.length > 0);
        if (view) {
            view.cy.destroy();
            view = null;
        }
        if (!jobs.length) {
            return;
        }
        view = XJ.dagView($('#jobGraph')[0], {
            nodes: jobs.map(function (j) {
                return { id: j.id, label: '#' + j.id + ' ' + j.jobDesc, state: j.last ? j.last.result : 'none' };
            }),
            edges: graph.links.map(function (l) { return { source: l[0], target: l[1] }; }),
            states: RESULTS,
            direction: 'LR',
            onSelect: function (id) {
                window.location.href = XJ.url('/joblog?jobId=' + encodeURIComponent(id));
            }
        });
        XJ.jobGraph = view;
    }

    function load() {
        XJ.call('/jobinfo/graph/data', { jobGroup: $('#jobGroup').val() || 0 }, { method: 'GET', success: draw });
    }

    $('#searchBtn').on('click', load);
    $('#jobGroup, #linkedOnly').on('change', load);
    load();
});
