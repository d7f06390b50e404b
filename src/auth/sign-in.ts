import type { CommonQueryMethods } from 'slonik';
import { findSignInUser, setUserPassword, type UserRow } from '../db/repositories/users.js';
import { hashPassword, passwordProblem, verifyPassword } from './passwords.js';

export class PasswordRejectedError extends Error {}

/**
 * Sets a user's sign-in password after checking it against the policy. Throws
 * PasswordRejectedError with the reason; returns null when there is no such user.
 */
export async function setPassword(db: CommonQueryMethods, userId: string, password: string): Promise<UserRow | null> {
  const problem = passwordProblem(password);
  if (problem) throw new PasswordRejectedError(problem);
  return setUserPassword(db, userId, await hashPassword(password));
}

/**
 * The active user whose e-mail and password these are, or null: an unknown address, a wrong
 * password and a disabled user look the same to the caller, and take the same time.
 */
export async function verifySignIn(db: CommonQueryMethods, email: string, password: string): Promise<UserRow | null> {
  const user = await findSignInUser(db, email.trim());
  const ok = await verifyPassword(user?.password_hash ?? null, password);
  if (!ok || !user || user.status !== 'active') return null;
  const { password_hash: _hash, ...row } = user;
  return row;
}
