/**
 * The one shape of "reason + sentence" across the product: a reason code a program can branch
 * on, and a full sentence that names the object and says what to do. The certificate renewal's
 * violations, the Secret decoder's problems, the TLS material and peer checks, and chain
 * verification all return it; the validator's findings carry the same sentence with a code,
 * a severity and a path.
 */
export interface Problem<R extends string = string> {
  readonly reason: R;
  readonly message: string;
}
