/**
 * Stops the forms' work in this process and answers once it is done: the workers finish what they
 * are sending (its outcome recorded), then the database closes. It ends nothing else: the owner's
 * server, and the process, are the owner's to close. Safe to call more than once; resolves at once
 * in a process whose forms never started.
 */
export declare function closeForms(): Promise<void>;
