/*
 * The tracking script, served by the gateway at /js/affiliate.js. Plain ES2017, no dependency.
 *   <script src="https://<gateway>/js/affiliate.js" data-key="pk_live_…" defer></script>
 * On a landing URL carrying ?ref=<link> (data-param names another parameter) it records the click
 * and keeps its id in a first-party cookie for the program's attribution window (under FIRST_CLICK a
 * later click does not replace a live one). A visitor id (random, first-party cookie, set only once
 * a visitor arrives through a link) makes reloads and repeat visits count once. data-cookie-domain
 * shares the cookies across subdomains (www. and app.). No third-party cookie, no fingerprinting;
 * with data-respect-dnt, Global Privacy Control or Do Not Track turns it off.
 */
(function () {
  'use strict';
  var script = document.currentScript;
  if (!script || window.affiliate) return;
  var key = script.getAttribute('data-key') || '';
  var param = script.getAttribute('data-param') || 'ref';
  var api = (script.getAttribute('data-api') || new URL(script.src).origin) + '/api/v1/browser/';
  var cookieDomain = script.getAttribute('data-cookie-domain');
  var YEAR = 400 * 86400; // the longest a browser keeps a cookie
  var VISITOR = 'aff_vid';
  var CLICK = 'aff_cid';
  var REFERRAL = 'aff_rid';

  var readCookie = (name) => {
    var match = document.cookie.match(new RegExp('(?:^|; )' + name + '=([^;]*)'));
    return match ? decodeURIComponent(match[1]) : null;
  };
  var writeCookie = (name, value, maxAge) => {
    var secure = location.protocol === 'https:' ? '; Secure' : '';
    var domain = cookieDomain ? '; Domain=' + cookieDomain : '';
    document.cookie = name + '=' + encodeURIComponent(value) + '; Max-Age=' + maxAge + '; Path=/' + domain + '; SameSite=Lax' + secure;
  };
  var post = async (path, body) => {
    var response = await fetch(api + path, {
      method: 'POST',
      headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      credentials: 'omit',
      keepalive: true,
    });
    var answer = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(answer.error || 'HTTP ' + response.status);
    return answer;
  };

  var optedOut =
    script.hasAttribute('data-respect-dnt') &&
    (navigator.globalPrivacyControl === true || navigator.doNotTrack === '1' || window.doNotTrack === '1');
  if (optedOut) {
    window.affiliate = {
      clickId: null,
      visitorId: null,
      ready: Promise.resolve(null),
      convert: () => Promise.resolve({ ok: false, reason: 'DO_NOT_TRACK' }),
    };
    return;
  }

  var link = new URLSearchParams(location.search).get(param);
  // Only a visitor who came through a link gets an id: nobody else is tracked at all.
  var visitorId = readCookie(VISITOR);
  if (!/^[A-Za-z0-9_-]{8,100}$/.test(visitorId || '')) {
    visitorId = link ? Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('') : null;
  }
  if (visitorId) writeCookie(VISITOR, visitorId, YEAR);

  var storedClick = readCookie(CLICK);
  var affiliate = {
    clickId: storedClick && /^\d+$/.test(storedClick) ? Number(storedClick) : null,
    visitorId: visitorId,
    ready: Promise.resolve(null),
    convert: null,
  };

  if (link) {
    var click = { link: link, visitorId: visitorId, landingUrl: location.href.slice(0, 2000) };
    if (/^https?:\/\//.test(document.referrer)) click.referrer = document.referrer.slice(0, 2000);
    affiliate.ready = post('clicks', click).then(
      (answer) => {
        // The click the program credits: under FIRST_CLICK a live earlier click keeps its place.
        var keep = answer.attributionModel === 'FIRST_CLICK' && affiliate.clickId !== null;
        if (answer.clickId !== null && !keep) {
          var days = answer.attributionWindowDays;
          writeCookie(CLICK, String(answer.clickId), days === null ? YEAR : days * 86400);
          affiliate.clickId = answer.clickId;
        }
        return answer;
      },
      (error) => {
        console.warn('affiliate.js: the click was not recorded: ' + error.message);
        return null;
      },
    );
  }

  // A short fingerprint of the email (not the email: no personal data in a cookie), so that the
  // referral a browser remembers is the one of the same customer.
  var emailTag = (email) => {
    var hash = 2166136261;
    for (var index = 0; index < email.length; index += 1) hash = Math.imul(hash ^ email.charCodeAt(index), 16777619);
    return (hash >>> 0).toString(36);
  };

  // One referral per customer and browser: a second call (or a later page) answers the first one.
  var converting = {};
  affiliate.convert = (customer) => {
    customer = customer || {};
    var tag = emailTag(
      String(customer.email || '')
        .trim()
        .toLowerCase(),
    );
    var stored = (readCookie(REFERRAL) || '').split('.');
    if (stored[0] === tag && stored[1]) return Promise.resolve({ ok: true, referralId: stored[1] });
    if (converting[tag]) return converting[tag];
    // A visitor who never came through a link is nobody's referral: not an error for a sign-up form.
    if (!visitorId && affiliate.clickId === null) return Promise.resolve({ ok: false, reason: 'NOT_REFERRED' });
    converting[tag] = affiliate.ready
      .then(() => {
        var from = affiliate.clickId !== null ? { clickId: affiliate.clickId } : { visitorId: visitorId };
        return post('referrals', Object.assign(from, { email: customer.email, name: customer.name, externalId: customer.externalId }));
      })
      .then(
        (answer) => {
          writeCookie(REFERRAL, tag + '.' + answer.referralId, YEAR);
          return answer;
        },
        (error) => {
          delete converting[tag];
          throw error;
        },
      );
    return converting[tag];
  };
  window.affiliate = affiliate;
})();
