#!/usr/bin/env bash
# An owner's checkout, customised as the README's "Make it yours" says, and `npm test` run in it
# (issue 28 item 3): the suites check the project through their own fixtures, so an owner's name,
# language, colours, fields and forms must not fail them. CI runs it for both suites after the
# normal runs (decision 0144).
#
#   bash scripts/customised-copy.sh [vitest arguments…]
#   bash scripts/customised-copy.sh --config vitest.e2e.config.ts   (the browser tests)
#
# The copy is the checkout's files as they are (tracked and new, not ignored ones) in a temporary
# folder, node_modules linked (site-forms to the copy's own package); it is removed afterwards unless KEEP_COPY=1.
set -euo pipefail
cd "$(dirname "$0")/.."

copy="$(mktemp -d "${TMPDIR:-/tmp}/owner-copy.XXXXXX")"
if [ "${KEEP_COPY:-}" != 1 ]; then trap 'rm -rf "$copy"' EXIT; fi
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$copy"
# The installed packages linked one by one, but site-forms itself is the copy's own workspace package.
mkdir "$copy/node_modules"
for entry in node_modules/* node_modules/.bin; do ln -s "$PWD/$entry" "$copy/$entry"; done
ln -sfn ../packages/site-forms "$copy/node_modules/site-forms"
# The package is built from the copy, as `npm install` builds it in a clone (its dist/ is not tracked).
(cd "$copy" && npm run --silent build -w site-forms >/dev/null)
cd "$copy"

# The site: another name, German, the owner's own colours and sender.
cat >site.config.ts <<'EOF'
import { defineSite } from 'site-forms/config';

export default defineSite({
  name: 'Tischlerei Berger',
  description: 'Möbel nach Maß aus unserer Werkstatt.',
  language: 'de',
  senderName: 'Tischlerei Berger Website',
  newsletterConsent: 'Ich möchte den Newsletter per E-Mail erhalten und kann mich jederzeit abmelden.',
  theme: { light: { accent: '#7a1fa2', 'accent-strong': '#5e1780' }, dark: { accent: '#e1b3f5' } },
});
EOF

# The quote example, exactly as docs/examples/quote/README.md says…
mkdir -p src/forms
cp docs/examples/quote/quote.form.ts src/forms/
cp docs/examples/quote/quote.astro src/pages/

# …and a form of the owner's own: a call-back request at /rueckruf.
cat >src/forms/callback.form.ts <<'EOF'
import { defineForm } from 'site-forms/config';

export default defineForm({
  name: 'rueckruf',
  title: 'Rückruf anfordern',
  submitLabel: 'Rückruf anfordern',
  busyLabel: 'Wird gesendet...',
  thanks: 'Danke! Wir rufen Sie zurück.',
  fields: [
    { name: 'name', type: 'text', label: 'Name', required: true, autocomplete: 'name' },
    { name: 'telefon', type: 'tel', label: 'Telefon', required: true, autocomplete: 'tel' },
    {
      name: 'zeit',
      type: 'select',
      label: 'Wann passt es Ihnen?',
      choices: [
        { value: 'vormittags', label: 'Vormittags' },
        { value: 'nachmittags', label: 'Nachmittags' },
      ],
    },
  ],
});
EOF
cat >src/pages/rueckruf.astro <<'EOF'
---
import { FormPage } from 'site-forms/pages';
---

<FormPage form="rueckruf" path="/rueckruf" description="Wir rufen Sie zurück.">
  <p class="lead">Hinterlassen Sie Ihre Nummer, wir rufen Sie zurück.</p>
</FormPage>
EOF

# The forms: a required phone field on the contact form, the quote and the call-back forms.
cat >forms.config.ts <<'EOF'
import callback from './src/forms/callback.form.ts';
import quote from './src/forms/quote.form.ts';
import { defineForms } from 'site-forms/config';

export default defineForms({
  contactFields: [{ name: 'phone', type: 'tel', label: 'Telefon', required: true, autocomplete: 'tel' }],
  forms: [quote, callback],
});
EOF

# The owner's own build reads their files: German pages, their forms at /quote and /rueckruf.
echo "customised copy: $copy" >&2
ASTRO_TELEMETRY_DISABLED=1 npm run --silent build >/dev/null
grep -q '<html lang="de"' dist/client/index.html
grep -q 'Tischlerei Berger' dist/client/contact/index.html
grep -q 'name="phone"' dist/client/contact/index.html
test -f dist/client/quote/index.html && test -f dist/client/rueckruf/index.html
echo "customised copy: the owner's build is German, with the phone field, /quote and /rueckruf" >&2

npm test -- "$@"
