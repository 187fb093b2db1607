/*
 * The tracking script, served by the gateway at /js/affiliate.js. Plain ES2017, no dependency.
 *   <script src="https://<gateway>/js/affiliate.js" data-key="pk_live_…" defer></script>
 * On a landing URL carrying ?ref=<link> (data-param names another parameter) it records the click
 * and keeps its id in a first-party cookie for the program's attribution window. A visitor id
 * (random, first-party cookie) makes reloads and repeat visits count once. No third-party cookie,
 * no fingerprinting; with data-respect-dnt, Global Privacy Control or Do Not Track turns it off.
 */
(function () {
  'use strict';
  var script = document.currentScript;
  if (!script || window.affiliate) return;
  var key = script.getAttribute('data-key') || '';
  var param = script.getAttribute('data-param') || 'ref';
  var api = (script.getAttribute('data-api') || new URL(script.src).origin) + '/api/v1/browser/';
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
    document.cookie = name + '=' + encodeURIComponent(value) + '; Max-Age=' + maxAge + '; Path=/; SameSite=Lax' + secure;
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

  var visitorId = readCookie(VISITOR);
  if (!/^[A-Za-z0-9_-]{8,100}$/.test(visitorId || '')) {
    visitorId = Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');
  }
  writeCookie(VISITOR, visitorId, YEAR);

  var storedClick = readCookie(CLICK);
  var affiliate = {
    clickId: storedClick && /^\d+$/.test(storedClick) ? Number(storedClick) : null,
    visitorId: visitorId,
    ready: Promise.resolve(null),
    convert: null,
  };

  var link = new URLSearchParams(location.search).get(param);
  if (link) {
    var click = { link: link, visitorId: visitorId, landingUrl: location.href.slice(0, 2000) };
    if (/^https?:\/\//.test(document.referrer)) click.referrer = document.referrer.slice(0, 2000);
    affiliate.ready = post('clicks', click).then(
      (answer) => {
        if (answer.clickId !== null) {
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

  // One referral per browser: a second call (or a later page) answers the first referral.
  var converting = null;
  affiliate.convert = (customer) => {
    var stored = readCookie(REFERRAL);
    if (stored) return Promise.resolve({ ok: true, referralId: stored });
    if (converting) return converting;
    customer = customer || {};
    converting = affiliate.ready
      .then(() => {
        var from = affiliate.clickId !== null ? { clickId: affiliate.clickId } : { visitorId: visitorId };
        return post('referrals', Object.assign(from, { email: customer.email, name: customer.name, externalId: customer.externalId }));
      })
      .then(
        (answer) => {
          writeCookie(REFERRAL, answer.referralId, YEAR);
          return answer;
        },
        (error) => {
          converting = null;
          throw error;
        },
      );
    return converting;
  };
  window.affiliate = affiliate;
})();
