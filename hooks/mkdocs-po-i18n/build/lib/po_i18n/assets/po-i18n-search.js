// The po-i18n plugin's search worker: Material's own worker with two changes to how text
// becomes search terms, so that a query is cut and lower-cased exactly as the indexed text is.
//
// Material lets a site bring its own worker (its __config "search" URL, integrations/
// search/worker/_/index.ts); the po-i18n plugin (po_i18n/search.py, option
// search_per_language) adds this file to the site, points every page at it and names
// Material's worker in "?worker=". It must sit in Material's worker folder: Material's
// worker loads its language support from "../lunr/", resolved against the URL of the
// worker that runs, which is this file.
//
// 1. Lower-casing in the index's language. lunr and Material's tokenizer call the
//    locale-free String.prototype.toLowerCase, on the indexed text and on the query alike:
//    Turkish "DAĞITIK" becomes "dağitik", not "dağıtık", and "İşlem" becomes "i̇şlem"
//    (i + U+0307). Only where the language's rules differ from the locale-free ones
//    (Turkish, Azerbaijani, Lithuanian), toLowerCase is made to follow them, inside this
//    worker only; the documents the results show are never changed.
// 2. Japanese queries cut like the Japanese text. Material segments indexed Japanese text
//    with TinySegmenter (internal/tokenize/index.ts), but not the query: 学習ループ stays one
//    term that matches no indexed word. Here each query word that Material's tokenizer
//    would segment is cut with the same segmenter, so 学習ループ searches for 学習 and ループ,
//    as 学習 ループ does; particles (lunr.ja's stop words: の, を, …) are left out when other
//    words remain, as they say nothing about what the reader is looking for.
//    Material then re-cuts every run of Han characters in the query greedily by the
//    shorter words its index holds (search/_/index.ts, "experimental Chinese
//    segmentation"): 同期 would become 同, which matches 同じ too. A backslash between two
//    Han characters of a word (lunr's escape character, dropped when lunr's QueryLexer
//    reads the term) keeps the word whole.
(function () {
  "use strict";
  var material = new URL(self.location.href).searchParams.get("worker") || "";
  if (!/^search\.[0-9a-f]+\.min\.js$/.test(material)) {  // only a file of Material's, from this folder
    throw new Error("po-i18n-search.js (po-i18n plugin): '?worker=" + material + "' is not Material's search worker");
  }
  var SETUP = 0, QUERY = 2;  // Material's SearchMessageType (integrations/search/worker/message)

  function lowerCaseAs(locale) {
    var plain = String.prototype.toLowerCase;
    var probe = "I\u0130";  // dotless-I languages differ from the locale-free rules here
    if (!locale || probe.toLocaleLowerCase(locale) === plain.call(probe)) {
      return;
    }
    String.prototype.toLowerCase = function () {  // eslint-disable-line no-extend-native
      return String.prototype.toLocaleLowerCase.call(this, locale);
    };
  }

  function keepWhole(word) {
    return word.replace(/(\p{sc=Han})(?=\p{sc=Han})/gu, "$1\\");
  }

  // One query word (Material splits the query at white space) cut into the words the
  // index holds: modifiers ("+", "-") go on every part, wildcards and boosts too, and
  // quotation marks around the whole.
  function segmentWord(word, segmenter, isStopWord) {
    var m = /^("?)([+-]?)(.*?)((?:\*|[~^]\d*)?)("?)$/.exec(word);
    var core = m[3];
    if (!core || !/^[MHIK]$/.test(segmenter.ctype_(core))) {
      return word;
    }
    var parts = segmenter.segment(core).filter(function (s) { return s.trim(); });
    var content = parts.filter(function (s) { return !isStopWord(s); });
    if (content.length) {
      parts = content;
    }
    return m[1] + parts.map(function (s) { return m[2] + keepWhole(s) + m[4]; }).join(" ") + m[5];
  }

  function segmentQuery(query) {
    var segmenter = self.lunr && self.lunr.segmenter;
    if (!segmenter || typeof query !== "string") {
      return query;
    }
    var filter = self.lunr.ja && self.lunr.ja.stopWordFilter;
    var isStopWord = function (s) { return filter ? !filter(s) : false; };
    return query.split(/(\s+)/).map(function (word) {
      return /^\s*$/.test(word) ? word : segmentWord(word, segmenter, isStopWord);
    }).join("");
  }

  // Registered before Material's worker registers its own listener, so it sees each
  // message first and changes it in place before Material reads it.
  self.addEventListener("message", function (event) {
    var message = event.data;
    if (message && message.type === SETUP) {
      var languages = message.data.config.lang;
      lowerCaseAs(languages.length === 1 ? languages[0] : null);
    } else if (message && message.type === QUERY) {
      message.data = segmentQuery(message.data);
    }
  });
  self.importScripts(material);
})();
