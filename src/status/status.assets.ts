/**
 * The page's only assets, hand-written and served by the service itself (no build step, no CDN, nothing inline:
 * the CSP's `script-src-attr 'none'` holds). A few KB together.
 */

export const STATUS_CSS = `
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2430;background:#f3f5f8}
header{display:flex;justify-content:space-between;align-items:center;padding:8px 16px;background:#1d2430;color:#fff}
h1{font-size:18px;margin:0}
h2{font-size:16px;margin:0 0 8px}
h3{font-size:13px;margin:4px 0;color:#4a5568}
small{font-weight:normal;color:#5f6b7a}
#panels{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,380px),1fr));gap:12px;padding:12px}
.generated{grid-column:1/-1;margin:0;color:#4a5568}
.panel{background:#fff;border:1px solid #d8dee6;border-radius:6px;padding:12px;min-width:0}
.cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:8px}
.table{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:3px 6px;border-bottom:1px solid #eef1f4;vertical-align:top}
code{font-size:12px;word-break:break-all}
.badge{display:inline-block;padding:0 6px;border-radius:8px;font-size:12px;background:#e2e8f0}
.badge.completed{background:#d3f4df;color:#14532d}.badge.failed{background:#fde2e1;color:#7f1d1d}
.badge.running{background:#dbeafe;color:#1e3a8a}.badge.kind{background:#fef3c7;color:#78350f}
.counts{list-style:none;margin:0;padding:0;font-size:13px}
.counts li{display:flex;justify-content:space-between;gap:8px;border-bottom:1px solid #eef1f4;padding:2px 0}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 10px;margin:0;font-size:13px}
.facts dt{color:#5f6b7a}.facts dd{margin:0;min-width:0}
.error{color:#7f1d1d;font-size:13px;overflow-wrap:anywhere}
.empty{color:#5f6b7a;font-size:13px}
.plot{margin:10px 0 0}
.plot figcaption{font-size:13px;font-weight:600}
.plot svg{display:block;width:100%;height:160px;background:#fbfcfd;border:1px solid #eef1f4}
.plot .grid{stroke:#e5e9ef;stroke-width:1;vector-effect:non-scaling-stroke}
.plot .axis{font-size:11px;fill:#5f6b7a}
.plot .line{fill:none;stroke-width:2;vector-effect:non-scaling-stroke}
.legend{display:flex;flex-wrap:wrap;gap:4px 12px;list-style:none;margin:4px 0 0;padding:0;font-size:12px}
.key{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px}
.s0{stroke:#2563eb;fill:#2563eb}.s1{stroke:#dc2626;fill:#dc2626}.s2{stroke:#16a34a;fill:#16a34a}
.s3{stroke:#d97706;fill:#d97706}.s4{stroke:#7c3aed;fill:#7c3aed}.s5{stroke:#0891b2;fill:#0891b2}
.key.s0{background:#2563eb}.key.s1{background:#dc2626}.key.s2{background:#16a34a}
.key.s3{background:#d97706}.key.s4{background:#7c3aed}.key.s5{background:#0891b2}
.plot .line.s0,.plot .line.s1,.plot .line.s2,.plot .line.s3,.plot .line.s4,.plot .line.s5{fill:none}
.login{max-width:360px;margin:15vh auto;padding:16px;background:#fff;border:1px solid #d8dee6;border-radius:6px}
.login form{display:grid;gap:8px}
input,button{font:inherit;padding:6px 10px}
button{cursor:pointer}
`;

export const STATUS_JS = `'use strict';
(function () {
  var LOGIN_ERRORS = {
    400: 'Paste an admin API key.',
    401: 'Wrong or revoked key.',
    403: 'This key is not an admin key.',
    429: 'Too many attempts; wait a minute and try again.'
  };
  var form = document.getElementById('login');
  if (form) {
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var input = document.getElementById('key');
      var error = document.getElementById('login-error');
      var key = input.value.trim();
      input.value = '';
      fetch('/status/login', {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key: key })
      }).then(function (res) {
        if (res.ok) { window.location.replace('/status'); return; }
        error.textContent = LOGIN_ERRORS[res.status] ||
          'The service could not log you in (HTTP ' + res.status + '); try again in a moment.';
        error.hidden = false;
      }, function () {
        error.textContent = 'The service did not answer.';
        error.hidden = false;
      });
    });
  }
  var logout = document.getElementById('logout');
  if (logout) {
    logout.addEventListener('click', function () {
      fetch('/status/logout', { method: 'POST', credentials: 'same-origin' }).then(function () {
        window.location.replace('/status');
      });
    });
  }
  var panels = document.getElementById('panels');
  if (panels) {
    var every = Number(panels.getAttribute('data-refresh-ms')) || 5000;
    var refresh = function () {
      fetch('/status/panels', { credentials: 'same-origin', cache: 'no-store' }).then(function (res) {
        if (res.status === 401) { window.location.replace('/status'); return null; }
        return res.ok ? res.text() : null;
      }).then(function (html) {
        if (html !== null) panels.innerHTML = html;
      }, function () { return undefined; }).then(function () {
        setTimeout(refresh, every);
      });
    };
    setTimeout(refresh, every);
  }
})();
`;
