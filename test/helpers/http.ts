/** A response's JSON body, loosely typed: tests assert on its shape with expect(). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const json = (res: Response): Promise<any> => res.json();
