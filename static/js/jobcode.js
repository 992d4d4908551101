/* GLUE web IDE: CodeMirror on the job's source, history versions, save with a version note. */
$(function () {
    'use strict';

    var MODES = {
        GLUE_GROOVY: 'text/x-java',
        GLUE_SHELL: 'text/x-sh',
        GLUE_PYTHON: 'text/x-python',
        GLUE_PHP: 'text/x-php',
        GLUE_NODEJS: 'text/javascript',
        GLUE_POWERSHELL: 'powershell'
    };

    var $container = $('#ideContainer');
    var jobId = $container.attr('data-job-id');
    var glueType = $container.attr('data-glue-type');
    var history = readHistory(document);
    var currentSource = $('#glueSourceCurrent').val();

    /** The versions a jobcode page document lists, from its JSON data element. */
    function readHistory(doc) {
        var data = doc.getElementById('glueHistory');
        return data ? JSON.parse(data.textContent || '[]') : null;
    }

    /**
     * Reloads the version list from the page as the server renders it now, so a saved version is offered
     * at once; the editor keeps what was typed. A page without the list (the session ended) is opened.
     */
    function refreshHistory() {
        return $.get(window.location.href).then(function (html) {
            var doc = new DOMParser().parseFromString(html, 'text/html');
            var fresh = readHistory(doc);
            var $options = $(doc).find('#glueVersion option');
            if (!fresh || !$options.length) {
                window.location.reload();
                return;
            }
            history = fresh;
            currentSource = $(doc).find('#glueSourceCurrent').prop('textContent');
            $('#glueVersion').empty().append($options);
        }, function () {
            window.location.reload();
        });
    }

    var editor = CodeMirror.fromTextArea(document.getElementById('glueSource'), {
        mode: MODES[glueType] || 'text/x-java',
        theme: 'idea',
        lineNumbers: true,
        matchBrackets: true,
        styleActiveLine: true,
        indentUnit: 4,
        extraKeys: { 'Ctrl-Space': 'autocomplete' }
    });
    editor.on('inputRead', function (cm, change) {
        if (change.text.length === 1 && /\w/.test(change.text[0]) && cm.showHint) {
            cm.showHint({ hint: CodeMirror.hint.anyword, completeSingle: false });
        }
    });
    editor.setValue(currentSource || '');
    editor.setSize('100%', '100%');
    window.glueEditor = editor;

    // Choosing a version only loads its source; nothing is stored until Save.
    $('#glueVersion').on('change', function () {
        var value = $(this).val();
        if (value === 'current') {
            editor.setValue(currentSource || '');
            return;
        }
        for (var i = 0; i < history.length; i++) {
            if (String(history[i].id) === value) {
                editor.setValue(history[i].glueSource || '');
                return;
            }
        }
    });

    $('#closeIde').on('click', function (e) {
        e.preventDefault();
        window.close();
    });

    var $modal = $('#saveModal');
    var $form = $('#saveGlueForm');

    $('#saveGlue').on('click', function (e) {
        e.preventDefault();
        XJ.showModal($modal, $form);
    });

    $modal.on('shown.bs.modal', function () {
        $('#glueRemark').trigger('focus');
    });

    XJ.validate($form, {
        rules: {
            glueRemark: { required: true, rangelength: [4, 100] }
        },
        messages: {
            glueRemark: {
                required: I18n.system_please_input + I18n.jobinfo_glue_remark,
                rangelength: I18n.jobinfo_glue_remark_limit
            }
        }
    }, function () {
        var $button = $('#saveGlueSubmit').prop('disabled', true);
        XJ.call('/jobcode/save', {
            id: jobId,
            glueSource: editor.getValue(),
            glueRemark: $('#glueRemark').val()
        }, {
            success: function () {
                $modal.modal('hide');
                XJ.toast(I18n.jobinfo_glue_save_success, true);
                refreshHistory();
            }
        }).always(function () {
            $button.prop('disabled', false);
        });
    });
});
