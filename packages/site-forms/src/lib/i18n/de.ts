import type { Catalogue } from './en.ts';

/**
 * Every text a visitor reads, in German (`language: 'de'` in site.config.ts), addressing the
 * visitor as „Sie“.
 * Hint: typed as the English catalogue, so a text missing here, or one too many, fails `npm run check`.
 */
export const de: Catalogue = {
  site: {
    description: (name) => `${name}: Neuigkeiten und ein Weg, uns zu erreichen.`,
    newsletterConsent: 'Ich möchte den Newsletter per E-Mail erhalten. Ich kann ihn jederzeit abbestellen.',
  },

  layout: {
    skipLink: 'Zum Inhalt springen',
    navigation: 'Hauptmenü',
    home: 'Startseite',
    contact: 'Kontakt',
    errorTitle: (title) => `Fehler: ${title}`,
    confirmTitle: (title) => `Nachricht bestätigen · ${title}`,
    backHome: 'Zurück zur Startseite',
    backTo: (host) => `Zurück zu ${host}`,
  },

  client: {
    failed: 'Etwas ist schiefgegangen. Bitte versuchen Sie es noch einmal.',
  },

  newsletter: {
    title: 'Den Newsletter abonnieren',
    heading: 'Unser Newsletter',
    lead: 'Gelegentliche Neuigkeiten, direkt in Ihr Postfach. Geben Sie Ihre E-Mail-Adresse an, und wir nehmen Sie in die Liste auf.',
    question: 'Vorher eine Frage?',
    questionLink: 'Schreiben Sie uns',
    formName: 'Den Newsletter abonnieren',
    emailLabel: 'E-Mail-Adresse',
    submit: 'Abonnieren',
    busy: 'Wird abonniert …',
    thanks: 'Danke für Ihr Abonnement!',
    confirmThanks: 'Wir haben Ihnen eine E-Mail geschickt: Bestätigen Sie Ihr Abonnement über den Link darin.',
  },

  contact: {
    title: 'Kontakt',
    description: 'Schreiben Sie uns: Fragen, Ideen oder Rückmeldungen. Wir antworten per E-Mail.',
    lead: 'Fragen, Ideen oder Rückmeldungen? Schreiben Sie uns, und wir antworten an Ihre E-Mail-Adresse.',
    nameLabel: 'Name',
    emailLabel: 'E-Mail-Adresse',
    messageLabel: 'Nachricht',
    messageHint: (min) => `Mindestens ${min} Zeichen.`,
    submit: 'Nachricht senden',
    busy: 'Wird gesendet …',
    thanks: 'Danke für Ihre Nachricht! Wir melden uns bald bei Ihnen.',
  },

  confirmMessage: {
    heading: 'Noch ein Schritt: Nachricht senden?',
    explanation:
      'Ihr Browser hat das Skript dieser Seite nicht ausgeführt, das uns sonst zeigt, dass ein Mensch schreibt. Bitte prüfen Sie Ihre Nachricht und klicken Sie auf die Schaltfläche, um sie zu senden.',
    submit: 'Meine Nachricht senden',
    notMeant: 'Nicht, was Sie wollten?',
    writeAgain: 'Eine neue Nachricht schreiben',
  },

  fields: {
    chooseOne: 'Bitte wählen',
    honeypot: 'Dieses Feld leer lassen',
  },

  uploads: {
    chosen: 'Ausgewählte Dateien',
    progressLabel: 'Fortschritt des Hochladens',
    uploading: 'Wird gesendet: {percent} %',
    tooLarge: (size) => `{name} ist größer als ${size}; bitte wählen Sie eine kleinere Datei.`,
    tooMany: (count) => (count === 1 ? 'Bitte wählen Sie nur eine Datei.' : `Bitte wählen Sie höchstens ${count} Dateien.`),
    chooseAgain: 'Ihre Dateien wurden nicht behalten: Bitte wählen Sie sie noch einmal aus.',
  },

  validation: {
    invalidEmail: 'Bitte geben Sie eine gültige E-Mail-Adresse ein',
    honeypot: 'Dieses Feld muss leer bleiben',
    nameLength: (min, max) => `Der Name muss zwischen ${min} und ${max} Zeichen lang sein`,
    nameCharacters: 'Der Name darf keine Zeilenumbrüche oder Steuerzeichen enthalten',
    messageTooShort: (min) => `Die Nachricht muss mindestens ${min} Zeichen lang sein`,
    messageTooLong: (max) => `Die Nachricht darf höchstens ${max} Zeichen lang sein`,
    messageCharacters: 'Die Nachricht darf keine Steuerzeichen enthalten',
    required: (label) => `Bitte füllen Sie „${label}“ aus`,
    unticked: (label) => `Bitte kreuzen Sie „${label}“ an, um fortzufahren`,
    tooShort: (label, min) => `„${label}“ muss mindestens ${min} Zeichen lang sein`,
    tooLong: (label, max) => `„${label}“ darf höchstens ${max} Zeichen lang sein`,
    tooSmall: (label, min) => `„${label}“ muss mindestens ${min} sein`,
    tooLarge: (label, max) => `„${label}“ darf höchstens ${max} sein`,
    lineBreaks: (label) => `„${label}“ darf keine Zeilenumbrüche oder Steuerzeichen enthalten`,
    controlCharacters: (label) => `„${label}“ darf keine Steuerzeichen enthalten`,
    notNumber: (label) => `„${label}“ muss eine Zahl sein`,
    notDate: (label) => `„${label}“ muss ein Datum sein`,
    notWebAddress: (label) => `„${label}“ muss eine Webadresse sein, die mit https:// oder http:// beginnt`,
    notPhone: (label) => `„${label}“ muss eine Telefonnummer sein`,
    notChoice: (label) => `Bitte wählen Sie eine der Möglichkeiten für „${label}“`,
    invalid: (label) => `„${label}“ ist nicht gültig`,
    fileType: (label, accept) => `„${label}“: Diese Art von Datei wird nicht angenommen (angenommen: ${accept})`,
    fileTooLarge: (label, size) => `„${label}“: Eine Datei ist größer als ${size}`,
    tooManyFiles: (label, max) => `„${label}“: Senden Sie höchstens ${max} ${max === 1 ? 'Datei' : 'Dateien'}`,
    fileRefused: (label) => `„${label}“: Diese Datei wurde von der Virenprüfung abgelehnt`,
  },

  formDefaults: {
    submit: 'Senden',
    busy: 'Wird gesendet …',
    thanks: 'Vielen Dank! Wir haben es erhalten.',
  },

  refusals: {
    fileLinkRefused: 'Dieser Download-Link ist abgelaufen oder ungültig.',
    internalError: 'Interner Serverfehler',
    notFound: 'Nicht gefunden',
    badRequest: 'Ungültige Anfrage',
    methodNotAllowed: (methods) => `Verwenden Sie ${methods.join(' oder ')} für diese Adresse`,
    tooManyAttempts: (minutes) => `Zu viele Versuche. Bitte versuchen Sie es in ${minutes} ${minutes === 1 ? 'Minute' : 'Minuten'} noch einmal.`,
    formType: 'Senden Sie das Formular als multipart/form-data oder application/x-www-form-urlencoded',
    formEncoding: 'Senden Sie das Formular ohne Content-Encoding',
    formUnreadable: 'Das Formular konnte nicht gelesen werden',
    notUtf8: 'Das Formular konnte nicht gelesen werden: Senden Sie es als UTF-8',
    tooLarge: (kilobytes) => `Das Formular ist zu groß; die Grenze liegt bei ${kilobytes} KB`,
    uploadTooLarge: (size) => `Die Dateien sind zusammen zu groß; die Grenze liegt bei ${size}`,
    uploadsUnavailable: 'Dateien können gerade nicht angenommen werden. Bitte versuchen Sie es in ein paar Minuten noch einmal.',
    uploadTimedOut: 'Die Dateien kamen zu langsam an. Bitte versuchen Sie es noch einmal, mit einer schnelleren Verbindung oder kleineren Dateien.',
    requestTimedOut: 'Die Anfrage kam zu langsam an. Bitte versuchen Sie es noch einmal.',
    foreignOrigin: 'Die Formulare dieser Website können nicht von einer anderen Website aus gesendet werden',
    misdirected: 'Diese Website antwortet nicht unter dieser Adresse',
    confirmationExpired: 'Diese Bestätigung ist abgelaufen. Bitte senden Sie Ihre Nachricht noch einmal.',
    notResubscribable:
      'Diese Adresse hat den Newsletter früher abbestellt, deshalb können wir sie hier nicht wieder aufnehmen. Nutzen Sie den Link zum Abonnieren in einer unserer früheren E-Mails, oder schreiben Sie uns.',
    forgotten:
      'Diese Adresse wurde auf Wunsch ihres Inhabers aus unserer Liste entfernt und kann hier nicht wieder aufgenommen werden. Bitte schreiben Sie uns, um den Newsletter wieder zu abonnieren.',
    providerBusy: 'Der Newsletter-Dienst ist gerade ausgelastet. Bitte versuchen Sie es in ein paar Minuten noch einmal.',
    providerMisconfigured: 'Wir können Sie gerade nicht eintragen. Bitte versuchen Sie es später noch einmal.',
    confirmationNotSent: 'Wir können die Bestätigungs-E-Mail gerade nicht senden. Bitte versuchen Sie es in ein paar Minuten noch einmal.',
    confirmationLinkExpired: 'Dieser Bestätigungslink ist abgelaufen oder wurde schon benutzt. Bitte abonnieren Sie den Newsletter noch einmal.',
    unsubscribeLinkInvalid: 'Dieser Abmeldelink ist nicht mehr gültig: Vielleicht sind Sie schon abgemeldet.',
    proofMissing:
      'Wir konnten nicht bestätigen, dass dies aus unserem Anmeldeformular kam. Bitte schalten Sie JavaScript für diese Website ein, laden Sie die Seite neu und versuchen Sie es noch einmal.',
  },

  notFound: {
    title: 'Seite nicht gefunden',
    description: 'Diese Seite gibt es nicht.',
    lead: 'Unter dieser Adresse ist nichts. Vielleicht wurde die Seite verschoben, oder der Link ist falsch geschrieben.',
    home: 'Zur Startseite',
    contact: 'Kontakt',
  },

  thankYou: {
    contact: {
      title: 'Nachricht gesendet',
      description: 'Ihre Nachricht an uns.',
      heading: 'Danke für Ihre Nachricht!',
      lead: 'Sie ist auf dem Weg zu uns, und wir antworten an die E-Mail-Adresse, die Sie angegeben haben.',
      again: 'Eine weitere Nachricht senden',
    },
    newsletter: {
      title: 'Sie haben den Newsletter abonniert',
      description: 'Ihr Abonnement des Newsletters.',
      heading: 'Danke für Ihr Abonnement!',
      lead: 'Sie stehen auf der Liste: Die nächste Ausgabe des Newsletters kommt in Ihr Postfach.',
      question: 'Fragen? Schreiben Sie uns',
    },
    confirmSubscription: {
      title: 'Bitte prüfen Sie Ihr Postfach',
      description: 'Bestätigen Sie Ihr Abonnement des Newsletters.',
      heading: 'Bitte prüfen Sie Ihr Postfach',
      lead: 'Wir haben Ihnen eine E-Mail mit einem Link geschickt. Öffnen Sie ihn und klicken Sie auf die Schaltfläche, um zu bestätigen: Erst dann ist das Abonnement aktiv. Der Link gilt 48 Stunden.',
    },
    unsubscribed: {
      title: 'Abgemeldet',
      description: 'Sie erhalten den Newsletter nicht mehr.',
      heading: 'Sie sind abgemeldet',
      lead: 'Der Newsletter kommt nicht mehr zu Ihnen.',
    },
    any: {
      title: 'Vielen Dank',
      description: 'Ihre Einsendung ist angekommen.',
      heading: 'Vielen Dank!',
      lead: 'Wir haben Ihre Einsendung erhalten.',
    },
    form: {
      title: (title) => `Gesendet: ${title}`,
      back: (title) => `Zurück zu „${title}“`,
    },
  },

  subscription: {
    confirm: {
      title: 'Abonnement bestätigen',
      description: (site) => `Bestätigen Sie Ihr Abonnement des Newsletters von ${site}.`,
      heading: 'Abonnement bestätigen',
      lead: (site) => `Ein Klick, und der Newsletter von ${site} kommt in Ihr Postfach.`,
      submit: 'Mein Abonnement bestätigen',
    },
    unsubscribe: {
      title: 'Abmelden',
      description: (site) => `Den Newsletter von ${site} abbestellen.`,
      heading: 'Abmelden',
      lead: (site) => `Klicken Sie auf die Schaltfläche, und der Newsletter von ${site} kommt nicht mehr zu Ihnen.`,
      submit: 'Abmelden',
    },
  },

  exports: {
    separator: ';',
    columns: {
      id: 'Nr.',
      createdAt: 'Eingegangen',
      status: 'Status',
      attempts: 'Versuche',
      nextAttemptAt: 'Nächster Versuch',
      lastError: 'Letzter Fehler',
      sentAt: 'Gesendet',
      spamReasons: 'Spam-Gründe',
      form: 'Formular',
    },
    statuses: { pending: 'Wartend', sent: 'Gesendet', failed: 'Fehlgeschlagen', spam: 'Als Spam zurückgehalten' },
  },

  values: {
    yes: 'Ja',
    no: 'Nein',
    empty: '(leer)',
  },

  ownerMail: {
    contactSubject: (site, name) => `[${site}] Neue Nachricht von ${name}`,
    formSubject: (site, title, name) => `[${site}] Neu: ${title} von ${name}`,
    unnamed: '(ohne Namen)',
    from: (name, address) => `Von: ${name} <${address}>`,
    contactSent: (at, id, site) => `Gesendet: ${at} (Kontaktnachricht #${id} auf ${site})`,
    formSent: (at, title, id, site) => `Gesendet: ${at} (${title} #${id} auf ${site})`,
    readIt: (address) => `Lesen Sie sie in Ihrem Posteingang: ${address}`,
    files: 'Dateien:',
    attached: (name, size) => `- ${name} (${size}), angehängt`,
    notAttached: (name, size) => `- ${name} (${size}), zu groß für diese Mail: laden Sie sie im Posteingang herunter`,
    gone: (name, size) => `- ${name} (${size}), nicht mehr im Speicher`,
  },

  spamDigest: {
    subject: (site, count) => `[${site}] Als Spam zurückgehalten: ${count === 1 ? '1 Nachricht' : `${count} Nachrichten`}`,
    summary: (count) =>
      `${count === 1 ? '1 Nachricht wurde' : `${count} Nachrichten wurden`} seit der letzten Übersicht als Spam zurückgehalten. Keine davon wurde Ihnen gemailt.`,
    heldBecause: (reasons) => `zurückgehalten, weil: ${reasons}`,
    older: (count) => `…und ${count === 1 ? 'eine ältere' : `${count} ältere`}.`,
    byCommand: (list, show, release) => [
      `Alle ansehen:           ${list}`,
      `Eine lesen:             ${show}`,
      `Ist eine kein Spam:     ${release}   (sie wird dann wie jede andere zugestellt)`,
    ],
    inAdmin: (address) => [
      `Prüfen Sie sie in Ihrem Posteingang: ${address}`,
      'Eine Nachricht, die kein Spam ist, wird wie jede andere zugestellt, sobald Sie sie mit „Not spam“ markieren.',
    ],
    retention: (days) => `Zurückgehaltene Nachrichten werden ${days} Tage nach ihrem Eingang gelöscht (SPAM_RETENTION_DAYS).`,
    reasons: {
      'proof-missing': 'kein Nachweis, dass das Skript der Seite lief (JavaScript aus, oder ein Programm sendet direkt)',
      'proof-malformed': 'ein Nachweis, der sich nicht lesen lässt',
      'proof-expired': 'ein Nachweis, dessen Aufgabe abgelaufen war',
      'proof-forged': 'ein Nachweis, dessen Aufgabe diese Website nicht signiert hat',
      'proof-wrong': 'ein Nachweis, der seine Aufgabe nicht löst',
      'proof-replayed': 'ein Nachweis, den schon eine frühere Nachricht benutzt hat',
      'too-fast': 'weniger als 3 Sekunden nach dem Öffnen des Formulars gesendet',
      'no-browser': 'ohne die Header, die jeder aktuelle Browser sendet (ein Programm oder ein sehr alter Browser)',
      'too-many-links': 'mehr Links in der Nachricht, als SPAM_MAX_LINKS erlaubt',
      'link-in-name': 'ein Link oder eine Domain im Namen',
      'link-markup': 'Link-Auszeichnung in HTML oder BBCode in der Nachricht',
      'turnstile-failed': 'Cloudflare Turnstile hat den Besucher nicht durchgelassen',
      'akismet-spam': 'Akismet hielt sie für Spam',
      'marked-by-owner': 'vom Inhaber als Spam markiert',
    },
  },

  mail: {
    confirmation: {
      subject: (site) => `Bestätigen Sie Ihr Abonnement von ${site}`,
      lines: (site, confirm, unsubscribe) => [
        `Jemand, vermutlich Sie, möchte den Newsletter von ${site} an diese Adresse erhalten.`,
        '',
        'Zum Bestätigen öffnen Sie innerhalb von 48 Stunden diesen Link und klicken auf die Schaltfläche:',
        confirm,
        '',
        'Waren Sie es nicht, dann ignorieren Sie diese E-Mail: Ohne Bestätigung geschieht nichts.',
        '',
        `Zum Abbestellen, jederzeit: ${unsubscribe}`,
      ],
    },
    autoReply: {
      subject: 'Wir haben Ihre Nachricht erhalten',
      text: 'Hallo {name},\n\nvielen Dank für Ihre Nachricht an {site}. Wir haben sie erhalten und antworten bald.\n\nDies ist eine automatische Antwort.',
      nameless: 'zusammen',
      yourMessage: 'Ihre Nachricht:',
    },
  },
};
