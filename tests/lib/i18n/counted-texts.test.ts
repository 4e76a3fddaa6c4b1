import { describe, expect, test } from 'vitest';
import { catalogueFor } from '../../../packages/site-forms/src/lib/i18n/catalogues.ts';

/** The texts that say a count speak of one thing in the singular and of several in the plural, word for word. */
describe('texts that count', () => {
  const en = catalogueFor('en');
  const de = catalogueFor('de');

  test('too many files for the upload field', () => {
    expect(de.uploads.tooMany(1)).toBe('Bitte wählen Sie nur eine Datei.');
    expect(de.uploads.tooMany(3)).toBe('Bitte wählen Sie höchstens 3 Dateien.');
  });

  test('too many files in a sent form', () => {
    expect(en.validation.tooManyFiles('Photos', 1)).toBe('Photos: send at most 1 file');
    expect(en.validation.tooManyFiles('Photos', 4)).toBe('Photos: send at most 4 files');
    expect(de.validation.tooManyFiles('Fotos', 1)).toBe('„Fotos“: Senden Sie höchstens 1 Datei');
    expect(de.validation.tooManyFiles('Fotos', 4)).toBe('„Fotos“: Senden Sie höchstens 4 Dateien');
  });

  test('the methods a 405 names are joined by a word', () => {
    expect(de.refusals.methodNotAllowed(['GET', 'POST'])).toBe('Verwenden Sie GET oder POST für diese Adresse');
  });

  test("the spam digest's subject, summary and older ones", () => {
    expect(de.spamDigest.subject('Atelier', 1)).toBe('[Atelier] Als Spam zurückgehalten: 1 Nachricht');
    expect(de.spamDigest.subject('Atelier', 5)).toBe('[Atelier] Als Spam zurückgehalten: 5 Nachrichten');
    expect(de.spamDigest.summary(1)).toBe('1 Nachricht wurde seit der letzten Übersicht als Spam zurückgehalten. Keine davon wurde Ihnen gemailt.');
    expect(de.spamDigest.summary(5)).toBe('5 Nachrichten wurden seit der letzten Übersicht als Spam zurückgehalten. Keine davon wurde Ihnen gemailt.');
    expect(de.spamDigest.older(1)).toBe('…und eine ältere.');
    expect(de.spamDigest.older(2)).toBe('…und 2 ältere.');
    expect(en.spamDigest.older(1)).toBe('…and 1 older one.');
    expect(en.spamDigest.older(2)).toBe('…and 2 older ones.');
  });

  test("the spam digest's way to the inbox", () => {
    expect(en.spamDigest.inAdmin('https://forms.example/admin')).toEqual([
      'Review them in your inbox: https://forms.example/admin',
      'A message that is not spam is delivered like any other once you mark it "Not spam".',
    ]);
    expect(de.spamDigest.inAdmin('https://forms.example/admin')).toEqual([
      'Prüfen Sie sie in Ihrem Posteingang: https://forms.example/admin',
      'Eine Nachricht, die kein Spam ist, wird wie jede andere zugestellt, sobald Sie sie mit „Not spam“ markieren.',
    ]);
  });

  test('the German newsletter confirmation, line by line', () => {
    expect(de.mail.confirmation.lines('Atelier Nord', 'https://forms.example/c/1', 'https://forms.example/u/1')).toEqual([
      'Jemand, vermutlich Sie, möchte den Newsletter von Atelier Nord an diese Adresse erhalten.',
      '',
      'Zum Bestätigen öffnen Sie innerhalb von 48 Stunden diesen Link und klicken auf die Schaltfläche:',
      'https://forms.example/c/1',
      '',
      'Waren Sie es nicht, dann ignorieren Sie diese E-Mail: Ohne Bestätigung geschieht nichts.',
      '',
      'Zum Abbestellen, jederzeit: https://forms.example/u/1',
    ]);
  });
});
