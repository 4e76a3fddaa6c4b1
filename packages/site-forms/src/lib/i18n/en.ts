/**
 * Every text a visitor reads, in English: the pages, the form script's words, the validation
 * messages, the refusals, the mails a visitor gets and the owner's mail of each message
 * (decisions 0134 and 0145).
 * Hint: the texts of docs/api/openapi.yaml are here byte for byte (`Please enter a valid email
 * address`, `Internal server error`, `Subscribing...`): the English site's wire is the spec's.
 * A text that holds a value is a function of it, so each language orders its own words.
 */
export const en = {
  /** What the owner's site settings say when left out (site.config.ts). */
  site: {
    description: (name: string) => `${name}: news and a way to reach us.`,
    newsletterConsent: 'I would like to receive the newsletter by email. I can unsubscribe at any time.',
  },

  /** The frame of every page (src/layouts/Base.astro) and the titles of a page shown again. */
  layout: {
    skipLink: 'Skip to content',
    navigation: 'Main',
    home: 'Home',
    contact: 'Contact',
    /** The tab title of a form's page shown again with a refusal. */
    errorTitle: (title: string) => `Error: ${title}`,
    /** The tab title of the page that asks a person without JavaScript to confirm their message. */
    confirmTitle: (title: string) => `Confirm your message · ${title}`,
    backHome: 'Back to the home page',
    /** The link of a refused post's page back to the owner's site elsewhere, named by its host (decision 0167). */
    backTo: (host: string) => `Back to ${host}`,
  },

  /** What the form script shows when the request or the reading of its answer fails (spec 4.3). */
  client: {
    failed: 'Something went wrong. Please try again.',
  },

  /** The home page and its newsletter form. */
  newsletter: {
    title: 'Subscribe to the newsletter',
    heading: 'Get the newsletter',
    lead: 'Occasional updates, straight to your inbox. Leave your email address and we will add you to the list.',
    question: 'Questions first?',
    questionLink: 'Send us a message',
    formName: 'Subscribe to the newsletter',
    emailLabel: 'Email address',
    submit: 'Subscribe',
    busy: 'Subscribing...',
    thanks: 'Thanks for subscribing!',
    /** After the thanks, with double opt-in: the address is on the list only once the mail's link is followed. */
    confirmThanks: 'We have sent you an email: follow the link in it to confirm your subscription.',
  },

  /** The contact page and its form (src/lib/forms/contact.ts). */
  contact: {
    title: 'Contact us',
    description: 'Send us a message: questions, ideas or feedback. We reply by email.',
    lead: 'Questions, ideas or feedback? Send us a message and we will reply to your email address.',
    nameLabel: 'Name',
    emailLabel: 'Email address',
    messageLabel: 'Message',
    messageHint: (min: number) => `At least ${min} characters.`,
    submit: 'Send message',
    busy: 'Sending...',
    thanks: "Thanks for your message! We'll get back to you soon.",
  },

  /** The page that asks a person whose browser ran no script to confirm their message. */
  confirmMessage: {
    heading: 'One more step: send your message?',
    explanation:
      "Your browser did not run this page's script, which usually tells us that a person is writing. Please check your message and press the button to send it.",
    submit: 'Send my message',
    notMeant: 'Not what you meant?',
    writeAgain: 'Write a new message',
  },

  /** Parts of every form's markup. */
  fields: {
    /** The empty first option of a select. */
    chooseOne: 'Choose one',
    /** The label of the spam trap, which people never see. */
    honeypot: 'Leave this field empty',
  },

  /** A file field's words beside the browser's own (DefinedField.astro, src/scripts/uploads.ts). */
  uploads: {
    /** The label of the list of chosen files the script shows under the field. */
    chosen: 'Chosen files',
    /** The name of the progress bar of a post with files. */
    progressLabel: 'Upload progress',
    /** What a screen reader hears while a post with files is under way; `{percent}` is filled in by the script. */
    uploading: 'Sending: {percent} %',
    /** A chosen file over the field's size, named before the upload starts; `{name}` is filled in by the script. */
    tooLarge: (size: string) => `{name} is larger than ${size}; choose a smaller file.`,
    /** More files than the field takes. */
    tooMany: (count: number) => (count === 1 ? 'Choose one file only.' : `Choose at most ${count} files.`),
    /** At a file field of a page shown again after a refused post: browsers never keep a chosen file. */
    chooseAgain: 'Your files were not kept: please choose them again.',
  },

  /** What a refused field reads: the built-in forms', and the defaults of an owner's field, built from its label. */
  validation: {
    invalidEmail: 'Please enter a valid email address',
    honeypot: 'This field must be left empty',
    nameLength: (min: number, max: number) => `Name must be between ${min} and ${max} characters`,
    nameCharacters: 'Name must not contain line breaks or control characters',
    messageTooShort: (min: number) => `Message must be at least ${min} characters`,
    messageTooLong: (max: number) => `Message must be at most ${max} characters`,
    messageCharacters: 'Message must not contain control characters',
    required: (label: string) => `${label} is required`,
    unticked: (label: string) => `Please tick “${label}” to continue`,
    tooShort: (label: string, min: number) => `${label} must be at least ${min} characters`,
    tooLong: (label: string, max: number) => `${label} must be at most ${max} characters`,
    tooSmall: (label: string, min: string) => `${label} must be at least ${min}`,
    tooLarge: (label: string, max: string) => `${label} must be at most ${max}`,
    lineBreaks: (label: string) => `${label} must not contain line breaks or control characters`,
    controlCharacters: (label: string) => `${label} must not contain control characters`,
    notNumber: (label: string) => `${label} must be a number`,
    notDate: (label: string) => `${label} must be a date`,
    notWebAddress: (label: string) => `${label} must be a web address starting with https:// or http://`,
    notPhone: (label: string) => `${label} must be a phone number`,
    notChoice: (label: string) => `Please choose one of the options for ${label}`,
    invalid: (label: string) => `${label} is not valid`,
    fileType: (label: string, accept: string) => `${label}: this kind of file is not accepted (accepted: ${accept})`,
    fileTooLarge: (label: string, size: string) => `${label}: a file is larger than ${size}`,
    tooManyFiles: (label: string, max: number) => `${label}: send at most ${max} file${max === 1 ? '' : 's'}`,
    fileRefused: (label: string) => `${label}: this file was refused by the virus scan`,
  },

  /** The words of an owner's form that its definition leaves out (forms.config.ts). */
  formDefaults: {
    submit: 'Send',
    busy: 'Sending...',
    thanks: 'Thank you! We have received it.',
  },

  /** The `error` of a refused request, which the form shows (or its page, without JavaScript). */
  refusals: {
    /** A file's signed download link (webhooks, chat alerts) past its end, altered, or another file's. */
    fileLinkRefused: 'This download link has expired or is not valid.',
    internalError: 'Internal server error',
    notFound: 'Not found',
    badRequest: 'Bad request',
    methodNotAllowed: (methods: readonly string[]) => `Use ${methods.join(' or ')} for this address`,
    tooManyAttempts: (minutes: number) => `Too many attempts. Please try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
    formType: 'Send the form as multipart/form-data or application/x-www-form-urlencoded',
    formEncoding: 'Send the form without a Content-Encoding',
    formUnreadable: 'The form could not be read',
    notUtf8: 'The form could not be read: send it as UTF-8',
    tooLarge: (kilobytes: number) => `The form is too large; the limit is ${kilobytes} KB`,
    uploadTooLarge: (size: string) => `The files are too large together; the limit is ${size}`,
    uploadsUnavailable: 'Files cannot be received right now. Please try again in a few minutes.',
    /** A post with files still arriving at UPLOAD_TIMEOUT_SECONDS. */
    uploadTimedOut: 'The files took too long to arrive. Please try again, on a faster connection or with smaller files.',
    /** Any other request still arriving at REQUEST_TIMEOUT_SECONDS. */
    requestTimedOut: 'The request took too long to arrive. Please try again.',
    foreignOrigin: 'Forms on this site cannot be posted from another website',
    misdirected: 'This site does not answer to that address',
    confirmationExpired: 'This confirmation has expired. Please send your message again.',
    notResubscribable: 'This address unsubscribed earlier, so we cannot add it again here. Use the subscribe link in one of our earlier emails, or contact us.',
    forgotten: 'This address was removed from our list at its owner’s request, so it cannot be added again here. Please contact us to subscribe again.',
    providerBusy: 'The newsletter service is busy right now. Please try again in a few minutes.',
    providerMisconfigured: 'We could not subscribe you right now. Please try again later.',
    confirmationNotSent: 'We could not send the confirmation email right now. Please try again in a few minutes.',
    confirmationLinkExpired: 'This confirmation link has expired or was already used. Please subscribe again.',
    unsubscribeLinkInvalid: 'This unsubscribe link is not valid any more: you may already be unsubscribed.',
    proofMissing: 'We could not confirm that this came from our signup form. Please turn on JavaScript for this site, reload the page and try again.',
  },

  /** The page of an address with nothing at it. */
  notFound: {
    title: 'Page not found',
    description: 'This page does not exist.',
    lead: 'There is nothing at this address. It may have moved, or the link may be mistyped.',
    home: 'Go to the home page',
    contact: 'Contact us',
  },

  /** Where a form lands after a post without JavaScript, and after the newsletter's links. */
  thankYou: {
    contact: {
      title: 'Message sent',
      description: 'Your message to us.',
      heading: 'Thank you for your message!',
      lead: 'It is on its way to us, and we will reply to the email address you gave.',
      again: 'Send another message',
    },
    newsletter: {
      title: 'You are subscribed',
      description: 'Your subscription to the newsletter.',
      heading: 'Thanks for subscribing!',
      lead: 'You are on the list: the next issue of the newsletter will reach your inbox.',
      question: 'Questions? Send us a message',
    },
    confirmSubscription: {
      title: 'Check your inbox',
      description: 'Confirm your subscription to the newsletter.',
      heading: 'Check your inbox',
      lead: 'We sent you an email with a link. Open it and press the button to confirm: you are subscribed only then. The link works for 48 hours.',
    },
    unsubscribed: {
      title: 'Unsubscribed',
      description: 'You will not receive the newsletter any more.',
      heading: 'You are unsubscribed',
      lead: 'The newsletter will not come to you any more.',
    },
    /** The thank-you page of older builds (`/thank-you/?form=`). */
    any: {
      title: 'Thank you',
      description: 'Your submission has been received.',
      heading: 'Thank you!',
      lead: 'We have received your submission.',
    },
    /** An owner's form's thank-you page. */
    form: {
      title: (title: string) => `Sent: ${title}`,
      back: (title: string) => `Back to “${title}”`,
    },
  },

  /** The pages behind the links of the newsletter's emails. */
  subscription: {
    confirm: {
      title: 'Confirm your subscription',
      description: (site: string) => `Confirm your subscription to the newsletter of ${site}.`,
      heading: 'Confirm your subscription',
      lead: (site: string) => `One click, and the newsletter of ${site} comes to your inbox.`,
      submit: 'Confirm my subscription',
    },
    unsubscribe: {
      title: 'Unsubscribe',
      description: (site: string) => `Stop the newsletter of ${site}.`,
      heading: 'Unsubscribe',
      lead: (site: string) => `Press the button and the newsletter of ${site} stops coming to you.`,
      submit: 'Unsubscribe',
    },
  },

  /**
   * The spreadsheet export ("CSV for Excel" in the admin, `inbox export --excel`): the separator
   * Excel expects where this language is spoken, and the headers and statuses it writes.
   * Hint: a German Excel reads `;`, since its decimal mark is the comma; the form fields' headers
   * are their labels (forms.config.ts).
   */
  exports: {
    separator: ',' as ',' | ';',
    columns: {
      id: 'No.',
      createdAt: 'Received',
      status: 'Status',
      attempts: 'Attempts',
      nextAttemptAt: 'Next attempt',
      lastError: 'Last error',
      sentAt: 'Sent',
      spamReasons: 'Spam reasons',
      form: 'Form',
    },
    statuses: { pending: 'Waiting', sent: 'Sent', failed: 'Failed', spam: 'Held as spam' },
  },

  /** A stored value as the owner's mail and the pages show it (src/lib/forms/definition.ts `displayValue`). */
  values: {
    yes: 'Yes',
    no: 'No',
    /** An optional field left empty, in the owner's mail. */
    empty: '(empty)',
  },

  /**
   * The mail the owner gets of each message: the words around what the visitor wrote and the
   * owner's own labels and titles, which stay as the owner wrote them.
   */
  ownerMail: {
    contactSubject: (site: string, name: string) => `[${site}] New message from ${name}`,
    formSubject: (site: string, title: string, name: string) => `[${site}] New ${title} from ${name}`,
    /** The sender of a message whose name cannot stand in a mail. */
    unnamed: 'an unnamed visitor',
    from: (name: string, address: string) => `From: ${name} <${address}>`,
    contactSent: (at: string, id: number, site: string) => `Sent: ${at} (contact message #${id} on ${site})`,
    formSent: (at: string, title: string, id: number, site: string) => `Sent: ${at} (${title} #${id} on ${site})`,
    readIt: (address: string) => `Read it in your inbox: ${address}`,
    /** The heading of a message's files in the owner's mail. */
    files: 'Files:',
    /** A file that rides with the mail. */
    attached: (name: string, size: string) => `- ${name} (${size}), attached`,
    /** A file too large for the mail (MAIL_ATTACH_MAX_BYTES): it is in the admin. */
    notAttached: (name: string, size: string) => `- ${name} (${size}), too large for this mail: download it from the inbox`,
    /** A file whose bytes were removed from the storage (by hand, a bucket emptied) before the mail was made. */
    gone: (name: string, size: string) => `- ${name} (${size}), no longer in the storage`,
  },

  /** The owner's digest of the messages held as spam (src/lib/spam/digest.ts). */
  spamDigest: {
    subject: (site: string, count: number) => `[${site}] Held as spam: ${count === 1 ? '1 message' : `${count} messages`}`,
    summary: (count: number) =>
      `${count === 1 ? '1 message was' : `${count} messages were`} held as spam since the last digest. None of them was emailed to you.`,
    heldBecause: (reasons: string) => `held because: ${reasons}`,
    older: (count: number) => `…and ${count} older ${count === 1 ? 'one' : 'ones'}.`,
    /** Where to review them without the admin: the commands that work where the site runs (src/lib/commands.ts), as they are typed. */
    byCommand: (list: string, show: string, release: string) => [
      `To see them all:      ${list}`,
      `To read one:          ${show}`,
      `If one is not spam:   ${release}   (it is then delivered like any other message)`,
    ],
    inAdmin: (address: string) => [
      `Review them in your inbox: ${address}`,
      'A message that is not spam is delivered like any other once you mark it "Not spam".',
    ],
    retention: (days: number) => `Held messages are deleted ${days} days after they arrived (SPAM_RETENTION_DAYS).`,
    /** Why a message was held, one text per reason of src/lib/spam/verdict.ts. */
    reasons: {
      'proof-missing': "no proof that the page's script ran (JavaScript off, or a program posting directly)",
      'proof-malformed': 'a proof that cannot be read',
      'proof-expired': 'a proof whose challenge had expired',
      'proof-forged': 'a proof whose challenge this site did not sign',
      'proof-wrong': 'a proof that does not solve its challenge',
      'proof-replayed': 'a proof already used by an earlier message',
      'too-fast': 'sent less than 3 seconds after the form was opened',
      'no-browser': 'sent without the headers every current browser sends (a program, or a very old browser)',
      'too-many-links': 'more links in the message than SPAM_MAX_LINKS allows',
      'link-in-name': 'a link or a domain in the name',
      'link-markup': 'HTML or BBCode link markup in the message',
      'turnstile-failed': 'Cloudflare Turnstile did not pass the visitor',
      'akismet-spam': 'Akismet judged it spam',
      'marked-by-owner': 'marked as spam by the owner',
    },
  },

  /** The mails a visitor gets. */
  mail: {
    confirmation: {
      subject: (site: string) => `Confirm your subscription to ${site}`,
      lines: (site: string, confirm: string, unsubscribe: string) => [
        `Someone, probably you, asked to receive the newsletter of ${site} at this address.`,
        '',
        'To confirm, open this link within 48 hours and press the button:',
        confirm,
        '',
        'If it was not you, ignore this email: nothing happens without the confirmation.',
        '',
        `To stop at any time: ${unsubscribe}`,
      ],
    },
    autoReply: {
      /** AUTO_REPLY_SUBJECT and AUTO_REPLY_TEXT when not set; `{site}` and `{name}` are filled in. */
      subject: 'We received your message',
      text: 'Hello {name},\n\nthank you for writing to {site}. We have your message and will reply soon.\n\nThis is an automatic reply.',
      /** `{name}` for a sender who gave none that can go in a mail. */
      nameless: 'there',
      yourMessage: 'Your message:',
    },
  },
};

/** The texts of one language: the English catalogue's shape, so a language missing a text fails `npm run check`. */
export type Catalogue = typeof en;
